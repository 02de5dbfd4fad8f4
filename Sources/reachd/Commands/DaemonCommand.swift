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
            valueName: "path"),
        completion: .file())
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
            "Destination watches (and reach answers to come) one connection may hold. Default: \(DestinationLimits.defaultPerConnection).",
            valueName: "count"))
    var maxWatchesPerConnection = DestinationLimits.defaultPerConnection

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Destination watches one user may hold. Default: \(DestinationLimits.defaultPerUser).", valueName: "count"))
    var maxWatchesPerUser = DestinationLimits.defaultPerUser

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Destination watches the daemon holds in all; each costs a route lookup per address after every routing change. Default: \(DestinationLimits.defaultTotal).",
            valueName: "count"))
    var maxWatches = DestinationLimits.defaultTotal

    /// Where the configuration file is read from by default.
    static let defaultConfiguration = "/etc/reachd/reachd.conf"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The configuration file (keyfile format, every key documented in the shipped file). Default: \(defaultConfiguration); a missing file is an empty one.",
            valueName: "path"),
        completion: .file(extensions: ["conf"]))
    var config = defaultConfiguration

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run the connectivity check against this plain-HTTP URL (http://HOST[:PORT]/PATH): connectivity becomes full, portal or limited, and online needs full. Overrides [connectivity] url.",
            valueName: "url"))
    var checkURL: String?

    @Flag(name: .long, help: "No connectivity check, whatever the configuration says: connectivity stays unknown.")
    var noCheck = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What counts as online: status:CODE, header:NAME: VALUE or body:TEXT. Default: [connectivity] expect, else status:204.",
            valueName: "answer"))
    var checkExpect: String?

    @Option(name: .long, help: ArgumentHelp("Seconds a check may take. Default: [connectivity] timeout, else 5.", valueName: "seconds"))
    var checkTimeout: Double?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds between checks of an unchanged path while the answer is full. Default: [connectivity] interval, else 300.",
            valueName: "seconds"))
    var checkInterval: Double?

    /// The check that the flags and the configuration file ask for, the flags
    /// winning; `nil` when neither asks for one or `--no-check` says no.
    func connectivityCheck() throws -> ConnectivityCheck? {
        guard !noCheck else { return nil }
        let file = try ConfigurationFile.load(config)
        let section = "connectivity"
        // Every value is checked, used or not: a mistake shows when it is made,
        // not on the day the check is switched on.
        let enabled = try file?.bool(section, "enabled")
        let fileTimeout = try file?.duration(section, "timeout", in: .checkTimeout)
        let fileInterval = try file?.duration(section, "interval", in: .checkInterval)
        if let file, let url = file.string(section, "url") {
            do throws(ConnectivityCheckError) {
                _ = try ConnectivityCheck.target(of: url)
            } catch {
                throw ConfigurationError.invalid(path: file.path, line: file.line(section, "url")!, reason: error.description)
            }
        }
        if let file, let expect = file.string(section, "expect") {
            do throws(ConnectivityCheckError) { _ = try ConnectivityCheck.parseExpectation(expect) } catch {
                throw ConfigurationError.invalid(path: file.path, line: file.line(section, "expect")!, reason: error.description)
            }
        }
        if let file, enabled == true, file.string(section, "url") == nil {
            throw ConfigurationError.invalid(
                path: file.path, line: file.line(section, "enabled")!, reason: "enabled = yes needs url = http://HOST[:PORT]/PATH")
        }
        guard let url = checkURL ?? (enabled == false ? nil : file?.string(section, "url")) else { return nil }
        let expect = checkExpect ?? file?.string(section, "expect") ?? "status:204"
        // The flags were checked in validate(), the file's values above.
        let timeout = checkTimeout.flatMap(SecondsRange.checkTimeout.duration) ?? fileTimeout ?? .seconds(5)
        let interval = checkInterval.flatMap(SecondsRange.checkInterval.duration) ?? fileInterval ?? .seconds(300)
        return try ConnectivityCheck.parse(
            url: url, expectation: ConnectivityCheck.parseExpectation(expect), timeout: timeout, interval: interval)
    }

    /// `[metered]`: interfaces the configuration says are metered or not,
    /// overriding the guess from the link's kind.
    func meteredOverrides() throws -> [String: Bool] {
        guard let file = try ConfigurationFile.load(config) else { return [:] }
        var overrides: [String: Bool] = [:]
        for name in file.keys(in: "metered") { overrides[name] = try file.bool("metered", name) }
        return overrides
    }

    func validate() throws {
        let counts = [
            ("--max-clients", maxClients), ("--max-clients-per-user", maxClientsPerUser),
            ("--max-watches-per-connection", maxWatchesPerConnection), ("--max-watches-per-user", maxWatchesPerUser),
            ("--max-watches", maxWatches),
        ]
        for (flag, value) in counts {
            if let value, value < 1 { throw ValidationError("\(flag) must be at least 1, not \(value).") }
        }
        let times: [(String, Double?, SecondsRange)] = [
            ("--idle-timeout", idleTimeout, .idleTimeout), ("--check-timeout", checkTimeout, .checkTimeout),
            ("--check-interval", checkInterval, .checkInterval),
        ]
        for (flag, value, range) in times {
            if let value, range.duration(value) == nil {
                throw ValidationError("\(flag) must be \(range), not \(value).")
            }
        }
        do throws(ConnectivityCheckError) {
            if let checkURL { _ = try ConnectivityCheck.target(of: checkURL) }
            if let checkExpect { _ = try ConnectivityCheck.parseExpectation(checkExpect) }
        } catch {
            throw ValidationError("\(error)")
        }
        if noCheck && checkURL != nil { throw ValidationError("--no-check and --check-url exclude each other; pick one.") }
    }

    func run() throws {
        let passed = SocketActivation.passedSocket()
        // Under socket activation the path only names the socket in the log.
        let path = try socket ?? (passed != nil ? SocketPath.system : SocketPath.forDaemon())
        let level = logLevel
        let form: DaemonLogHandler.Form = DaemonLogHandler.stderrIsTheJournal() ? .journal : .terminal
        LoggingSystem.bootstrap { _ in
            var handler = DaemonLogHandler(form: form)
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
            idleTimeout: SecondsRange.idleTimeout.duration(idleTimeout)!)
        var check = try connectivityCheck()
        if check != nil, let reason = HTTPProbe.forbidden() {
            logger.error("running without the connectivity check: \(reason)")
            check = nil
        }
        let stop = try WakeSignal()
        ShutdownSignals.install(stop)
        let server = try DaemonServer(
            socketPath: path, passedSocket: passed, limits: limits, check: check,
            destinationLimits: DestinationLimits(
                perConnection: maxWatchesPerConnection, perUser: maxWatchesPerUser, total: maxWatches),
            meteredOverrides: try meteredOverrides(), stop: stop, systemd: SystemdNotifier(), logger: logger)
        try server.run()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
