#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Computes reachability in this process from netlink, for when no daemon runs.
/// The statuses are the same as the daemon's, with `source` `.embedded`.
///
/// ```swift
/// let now = try EmbeddedMonitor.currentStatus()
/// for try await status in EmbeddedMonitor.statuses() {
///     print(status.online)
/// }
/// ```
public enum EmbeddedMonitor {
    /// One status from one netlink snapshot: a dump of links and addresses and
    /// two route lookups. Cost does not depend on the size of the routing table.
    public static func currentStatus() throws(NetlinkError) -> NetworkStatus {
        try NetworkWatcher.snapshot(source: .embedded)
    }

    /// The current status, then one per change, from a netlink listener on a
    /// thread of its own. Ending the iteration stops the thread and closes its sockets.
    public static func statuses(
        logger: Logger = Logger(label: "reachd.embedded")
    ) -> AsyncThrowingStream<NetworkStatus, any Error> {
        statuses(logger: logger, traceDatagrams: nil)
    }

    package static func statuses(
        logger: Logger, traceDatagrams: (@Sendable ([UInt8]) -> Void)?
    ) -> AsyncThrowingStream<NetworkStatus, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: NetworkStatus.self, bufferingPolicy: .bufferingNewest(8))
        let stop: WakeSignal
        do { stop = try WakeSignal() } catch {
            continuation.finish(throwing: error)
            return stream
        }
        continuation.onTermination = { _ in stop.signal() }
        startDetachedThread {
            do {
                let watcher = try NetworkWatcher(source: .embedded, logger: logger)
                if let traceDatagrams { watcher.traceDatagrams(traceDatagrams) }
                continuation.yield(try watcher.start())
                var descriptors = [
                    pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: stop.fileDescriptor, events: Int16(POLLIN), revents: 0),
                ]
                while true {
                    // No timeout: an idle network costs no system calls.
                    guard poll(&descriptors, 2, -1) >= 0 else {
                        if errno == EINTR { continue }
                        throw SystemError("poll")
                    }
                    if descriptors[1].revents != 0 { break }
                    if descriptors[0].revents != 0, let status = try watcher.handleReadable() {
                        continuation.yield(status)
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return stream
    }
}
