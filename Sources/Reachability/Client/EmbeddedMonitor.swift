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
    /// thread of its own (``ReachabilityMonitor``'s loop, in-process only). A
    /// netlink failure is retried, not thrown. Ending the iteration stops the
    /// thread and closes its sockets.
    public static func statuses(
        logger: Logger = Logger(label: "reachd.embedded")
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
            let follower = StatusFollower(source: .embedded, socketPaths: [], logger: logger, stop: stop)
            do {
                try follower.run { update in
                    // In-process statuses are decoded already: this can't fail.
                    if let status = try? update.status() { continuation.yield(status) }
                    return true
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return stream
    }
}
