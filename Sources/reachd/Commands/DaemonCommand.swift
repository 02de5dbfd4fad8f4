import ArgumentParser
import Logging
import Reachability

/// Synchronous on purpose: the daemon's loop runs on the main thread and never
/// touches Swift's concurrency runtime (see ``ShutdownSignals`` for why).
struct DaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the reachability daemon in the foreground.",
        discussion: """
            Listens to the kernel's link, address, route and rule notifications and \
            publishes every change of the answer to clients of its Unix socket, as \
            newline-delimited JSON (the wire protocol: PROTOCOL.md in reachd's documentation). Logs each change to stderr. \
            Stops cleanly on SIGTERM or SIGINT and removes its socket.

            Under systemd (reachd.service, reachd.socket) it uses the socket systemd \
            passes (and reachd-metrics.socket's, when enabled, for the metrics), \
            reports READY=1 after its first snapshot and STATUS= on every \
            change, and pings the watchdog from its event loop. When stderr is the \
            journal, each change is a structured entry instead of a line on stderr \
            (MESSAGE_ID per kind, REACHD_* fields; the README gives the query).

            No client can starve the others: each is served a few requests per \
            wake-up and is not read while its answers are unread; beyond the client \
            limits a connection is answered too_many_clients and closed. The daemon \
            raises its open-file limit to the hard limit at start and derives its \
            default client limit from it.

            Examples:
              reachd daemon
              reachd daemon --socket /tmp/reachd.sock --log-level debug
              reachd daemon --max-clients 256 --max-clients-per-user 16
            """)

    @OptionGroup var options: DaemonOptions

    /// The flags and reachd.conf (read here, once), merged and checked.
    func settings() throws -> DaemonSettings {
        try DaemonSettings(
            options, file: ConfigurationFile.load(options.config ?? ConfigurationFile.defaultPath, named: options.config != nil))
    }

    func run() throws {
        var settings = try settings()
        let passed = SocketActivation.passedSockets()
        // Under socket activation the path only names the socket in the log:
        // the one systemd bound, which a drop-in may have moved.
        let path = try passed.socket.map { SocketActivation.boundPath(of: $0) ?? options.socket ?? SocketPath.system }
            ?? options.socket ?? SocketPath.forDaemon()
        let level = options.logLevel
        let form: DaemonLogHandler.Form = DaemonLogHandler.stderrIsTheJournal() ? .journal : .terminal
        LoggingSystem.bootstrap { _ in
            var handler = DaemonLogHandler(form: form)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "reachd")
        // Which file the settings came from, if any: a daemon started with the
        // wrong file otherwise looks as if it ignored the right one.
        if let file = settings.configuration {
            logger.info("configuration read", metadata: ["path": "\(file)"])
        } else {
            logger.info("no configuration file: the defaults", metadata: ["path": "\(options.config ?? ConfigurationFile.defaultPath)"])
        }
        // Before any descriptor is opened, and before the cap is derived from it.
        let (descriptorLimit, raiseFailure) = DescriptorLimit.raiseToHardLimit()
        if let raiseFailure {
            logger.warning("keeping the open-file limit of \(descriptorLimit)", metadata: ["error": "\(raiseFailure)"])
        }
        let limits = try ClientLimits(
            descriptorLimit: descriptorLimit, maxClients: settings.maxClients,
            maxClientsPerUser: settings.maxClientsPerUser, idleTimeout: settings.idleTimeout)
        if settings.check != nil, let reason = HTTPProbe.forbidden() {
            logger.error("running without the connectivity check: \(reason)")
            settings.check = nil
        }
        // The loop runs on this thread: the kernel's latency hint for it
        // (TimeSlice). Refused (an older systemd unit's seccomp filter), the
        // daemon serves as well, only later when the cores are busy.
        if case .refused(let error) = TimeSlice.request() {
            logger.info("the kernel refused a short time slice; changes reach clients later on a busy host",
                        metadata: ["errno": "\(error)"])
        }
        let stop = try WakeSignal()
        ShutdownSignals.install(stop)
        let server = try DaemonServer(settings, DaemonServer.Environment(
            socketPath: path, passed: passed, limits: limits, stop: stop,
            journal: form == .journal ? JournalWriter() : nil, logger: logger))
        try server.run()
    }
}
