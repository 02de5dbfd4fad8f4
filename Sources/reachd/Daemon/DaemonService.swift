import Logging
import Reachability
import ServiceLifecycle

/// The daemon as a swift-service-lifecycle service: the `ServiceGroup` turns
/// SIGTERM and SIGINT into a graceful shutdown, which signals the event loop.
struct DaemonService: Service {
    let socketPath: String
    let logger: Logger

    func run() async throws {
        let stop = try WakeSignal()
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // The loop blocks in epoll_wait for as long as the network is
                // quiet, so it gets a thread of its own.
                startDetachedThread { [socketPath, logger] in
                    do {
                        let server = try DaemonServer(
                            socketPath: socketPath, stop: stop, logger: logger, onPublish: { _ in })
                        try server.run()
                        continuation.resume()
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        } onCancelOrGracefulShutdown: {
            stop.signal()
        }
    }
}
