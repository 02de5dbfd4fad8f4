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

            Examples:
              reachd daemon
              reachd daemon --socket /tmp/reachd.sock --log-level debug
            """)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where to listen. Default: $REACHD_SOCKET, else \(SocketPath.system) for root, else $XDG_RUNTIME_DIR/reachd.sock.",
            valueName: "path"))
    var socket: String?

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: Logger.Level = .info

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
        let stop = try WakeSignal()
        ShutdownSignals.install(stop)
        let server = try DaemonServer(
            socketPath: path, passedSocket: passed, stop: stop, systemd: SystemdNotifier(), logger: Logger(label: "reachd"))
        try server.run()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
