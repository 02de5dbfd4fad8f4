import Logging
import Reachability

/// Where the client subcommands get statuses: the first daemon that answers,
/// else an in-process netlink monitor. The daemon is an optimisation, never a
/// precondition.
struct StatusFeed: Sendable {
    /// Daemon sockets to try, in order; empty means in-process only.
    let socketPaths: [String]

    /// One status, and a notice for the user when it was computed in-process.
    func currentStatus() throws -> (status: NetworkStatus, notice: String?) {
        var failures: [String] = []
        for path in socketPaths {
            do {
                return (try DaemonClient(socketPath: path).fetchStatus(), nil)
            } catch {
                failures.append(Self.describe(error, at: path))
            }
        }
        return (try EmbeddedMonitor.currentStatus(), Self.fallbackNotice(failures))
    }

    /// The current status, then every change. When the daemon goes away mid-way
    /// the sequence carries on in-process, so a long `monitor` or `wait-online`
    /// never goes blind.
    func statuses(
        notices: @escaping @Sendable (String) -> Void,
        traceDatagrams: (@Sendable ([UInt8]) -> Void)?
    ) -> AsyncThrowingStream<NetworkStatus, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: NetworkStatus.self)
        let socketPaths = socketPaths
        let task = Task {
            do {
                var failures: [String] = []
                for path in socketPaths {
                    let daemon: AsyncThrowingStream<NetworkStatus, any Error>
                    do throws(DaemonClientError) { daemon = try DaemonClient(socketPath: path).statuses() } catch {
                        failures.append(Self.describe(error, at: path))
                        continue
                    }
                    do {
                        for try await status in daemon { continuation.yield(status) }
                    } catch {
                        failures = ["\(error)"]
                    }
                    if Task.isCancelled { return continuation.finish() }
                    break
                }
                if !socketPaths.isEmpty { notices(Self.fallbackNotice(failures)) }
                let logger = Logger(label: "reachd.embedded")
                for try await status in EmbeddedMonitor.statuses(logger: logger, traceDatagrams: traceDatagrams) {
                    continuation.yield(status)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private static func fallbackNotice(_ failures: [String]) -> String {
        (failures.isEmpty ? "no daemon" : failures.joined(separator: "; ")) + "; computed in-process from netlink"
    }

    private static func describe(_ error: DaemonClientError, at path: String) -> String {
        switch error {
        case .notRunning: "no daemon at \(path)"
        case .connectionFailed, .closed, .rejected, .protocolError: error.description
        }
    }
}
