import ArgumentParser
import Reachability

/// Options every client subcommand shares: which daemon to ask, if any.
///
/// Without options a client asks the default daemons and, where none answers,
/// computes the answer in-process. `--socket` names one daemon, which then
/// must answer (as `nm-online` errs when NetworkManager doesn't); `--no-daemon`
/// asks none.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Ask the daemon at this socket, and fail (exit 2) if it doesn't answer. Default: $REACHD_SOCKET, else the socket a daemon of this user binds, then \(SocketPath.system), else compute in-process.",
            valueName: "path"),
        completion: .file())
    var socket: String?

    @Flag(name: .customLong("no-daemon"), help: "Ask no daemon: compute the answer in-process from netlink.")
    var noDaemon = false

    func validate() throws {
        if noDaemon && socket != nil {
            throw ValidationError("--socket names a daemon to ask and --no-daemon asks none; pick one.")
        }
    }

    /// Where to look for a daemon, in order; empty with `--no-daemon`.
    var socketPaths: [String] {
        noDaemon ? [] : socket.map { [$0] } ?? SocketPath.forClients()
    }

    /// Whether the answer may be computed in-process when no daemon answers:
    /// not when the user named the daemon to ask.
    var fallsBackInProcess: Bool { socket == nil }

    /// What a ``ReachabilityMonitor`` follows for these options.
    var source: ReachabilityMonitor.Source {
        noDaemon ? .embedded : socket == nil ? .automatic : .daemon
    }

    /// With `--socket`, the daemon there must answer before anything is
    /// followed: an error the user can act on beats a silent wait.
    func requireNamedDaemon() throws {
        guard let socket else { return }
        do {
            _ = try DaemonClient(socketPath: socket).ask(.get, timeout: DaemonClient.defaultTimeout)
        } catch {
            throw namedDaemonFailed(StatusFeed.describe(error, at: socket))
        }
    }

    /// Says on stderr that the daemon `--socket` named didn't answer, and what to do.
    func namedDaemonFailed(_ failure: String) -> ExitCode {
        Console.error("reachd: \(failure)")
        Console.error("reachd: start one with `reachd daemon --socket \(socket ?? "PATH")`, or leave out --socket to ask the default daemon or compute in-process")
        return .internalError
    }

    /// The current status, then every change: from the daemon while one
    /// answers, in-process otherwise, saying so on stderr when the source changes.
    /// With `--socket`, only that daemon's: while it is away nothing arrives.
    func statuses(announcingSource: Bool) -> AsyncThrowingStream<NetworkStatus, any Error> {
        let monitor = ReachabilityMonitor(source: source, socketPath: socket)
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
                        case .embedded where noDaemon: break
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
