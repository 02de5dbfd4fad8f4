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
            newline-delimited JSON (docs/PROTOCOL.md). Logs each change to stderr. \
            Stops cleanly on SIGTERM or SIGINT and removes its socket.

            Under systemd (reachd.service, reachd.socket) it uses the socket systemd \
            passes, reports READY=1 after its first snapshot and STATUS= on every \
            change, and pings the watchdog from its event loop.

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

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where to listen. Default: $REACHD_SOCKET, else \(SocketPath.system) for root, else $XDG_RUNTIME_DIR/reachd.sock.",
            valueName: "path"))
    var socket: String?

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: Logger.Level = .info

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Clients served at once. Default: the open-file limit less \(ClientLimits.reservedDescriptors), at most \(ClientLimits.defaultCeiling).",
            valueName: "count"))
    var maxClients: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Connections one user other than root may hold. Default: \(ClientLimits.defaultPerUser), or a quarter of --max-clients if less.",
            valueName: "count"))
    var maxClientsPerUser: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Close a client that has not subscribed and moves no data for this many seconds. Default: \(ClientLimits.defaultIdleTimeout.components.seconds).",
            valueName: "seconds"))
    var idleTimeout: Double = Double(ClientLimits.defaultIdleTimeout.components.seconds)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run the connectivity check against this plain-HTTP URL (http://HOST[:PORT]/PATH): connectivity becomes full, portal or limited, and online needs full.",
            valueName: "url"))
    var checkURL: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What counts as online: status:CODE, header:NAME: VALUE or body:TEXT. Default: status:204.",
            valueName: "answer"))
    var checkExpect = "status:204"

    @Option(name: .long, help: ArgumentHelp("Seconds a check may take. Default: 5.", valueName: "seconds"))
    var checkTimeout: Double = 5

    @Option(
        name: .long,
        help: ArgumentHelp("Seconds between checks of an unchanged path while the answer is full. Default: 300.", valueName: "seconds"))
    var checkInterval: Double = 300

    /// The check the flags ask for, or `nil`.
    func connectivityCheck() throws -> ConnectivityCheck? {
        guard let checkURL else { return nil }
        return try ConnectivityCheck.parse(
            url: checkURL, expectation: ConnectivityCheck.parseExpectation(checkExpect),
            timeout: .milliseconds(Int64(checkTimeout * 1000)), interval: .milliseconds(Int64(checkInterval * 1000)))
    }

    func validate() throws {
        for (flag, value) in [("--max-clients", maxClients), ("--max-clients-per-user", maxClientsPerUser)] {
            if let value, value < 1 { throw ValidationError("\(flag) must be at least 1, not \(value).") }
        }
        if !(idleTimeout > 0) || !idleTimeout.isFinite {
            throw ValidationError("--idle-timeout must be a positive number of seconds, not \(idleTimeout).")
        }
        for (flag, value) in [("--check-timeout", checkTimeout), ("--check-interval", checkInterval)] where !(value > 0) || !value.isFinite {
            throw ValidationError("\(flag) must be a positive number of seconds, not \(value).")
        }
        do { _ = try connectivityCheck() } catch let error as ConnectivityCheckError {
            throw ValidationError("\(error)")
        }
    }

    func run() throws {
        let passed = SocketActivation.passedSocket()
        // Under socket activation the path only names the socket in the log.
        let path = try socket ?? (passed != nil ? SocketPath.system : SocketPath.forDaemon())
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "reachd")
        // Before any descriptor is opened, and before the cap is derived from it.
        let (descriptorLimit, raiseFailure) = DescriptorLimit.raiseToHardLimit()
        if let raiseFailure {
            logger.warning("keeping the open-file limit of \(descriptorLimit)", metadata: ["error": "\(raiseFailure)"])
        }
        let limits = try ClientLimits(
            descriptorLimit: descriptorLimit, maxClients: maxClients, maxClientsPerUser: maxClientsPerUser,
            idleTimeout: .milliseconds(Int64(idleTimeout * 1000)))
        let stop = try WakeSignal()
        ShutdownSignals.install(stop)
        let server = try DaemonServer(
            socketPath: path, passedSocket: passed, limits: limits, check: try connectivityCheck(), stop: stop,
            systemd: SystemdNotifier(), logger: logger)
        try server.run()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
