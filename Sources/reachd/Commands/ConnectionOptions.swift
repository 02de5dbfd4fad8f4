import ArgumentParser
import Reachability

/// Options every client subcommand shares.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's socket. Default: $REACHD_SOCKET, else the socket a daemon of this user binds, then \(SocketPath.system).",
            valueName: "path"),
        completion: .file())
    var socket: String?

    /// Where to look for a daemon, in order.
    var socketPaths: [String] {
        socket.map { [$0] } ?? SocketPath.forClients()
    }

    /// The current status, then every change: from the daemon while one
    /// answers, in-process otherwise, saying so on stderr when the source changes.
    func statuses(announcingSource: Bool) -> AsyncThrowingStream<NetworkStatus, any Error> {
        let monitor = ReachabilityMonitor(source: .automatic, socketPath: socket)
        let statuses = monitor.statuses()
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: NetworkStatus.self)
        let task = Task {
            var source: StatusSource?
            do {
                for try await status in statuses {
                    if announcingSource, status.source != source {
                        switch status.source {
                        case .daemon where source != nil: Console.error("reachd: following the daemon again")
                        case .daemon: break
                        case .embedded: Console.error("reachd: no daemon answers; following netlink in-process")
                        }
                    }
                    source = status.source
                    continuation.yield(status)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
            withExtendedLifetime(monitor) {}
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// Options for output shape.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print the status as JSON, one object per line (the wire protocol: PROTOCOL.md in reachd's documentation).")
    var json = false
}
