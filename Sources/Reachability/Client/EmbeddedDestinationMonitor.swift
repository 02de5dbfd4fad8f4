#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Watches destinations in-process, the way the daemon does, on the calling
/// thread: its own netlink subscription, a ``DestinationTracker``, and a
/// watch on `/etc` for the resolver's files. What `reachd reach` and the
/// library do where no daemon answers. Lookups are this process's own
/// (no RTA_UID): its uid's rules apply as they would to its packets.
package final class EmbeddedDestinationMonitor {
    private let watcher: NetworkWatcher
    private let tracker: DestinationTracker
    private let keys: [DestinationTracker.Key]
    private let resolverFiles: FileChangeWatch?
    /// The network summary the names were last resolved for; `nil` until the
    /// first ``run(until:stop:deliver:)`` starts netlink.
    private var summary: NetworkStatus?

    package init(
        _ destinations: [Destination], family: AddressFamily?, resolutionTimeout: Duration = .seconds(5),
        logger: Logger = Logger(label: "reachd.destinations")
    ) throws(NetlinkError) {
        watcher = try NetworkWatcher(source: .embedded, logger: logger)
        do {
            tracker = try DestinationTracker(
                source: .embedded, firstSeq: NetworkWatcher.firstSequenceNumber(), resolutionTimeout: resolutionTimeout)
        } catch {
            throw NetlinkError(error.operation, errno: error.errno)
        }
        keys = destinations.map { DestinationTracker.Key($0, uid: nil, family: family) }
        resolverFiles = try? FileChangeWatch.resolverConfiguration()
    }

    /// Why ``run(until:stop:wake:deliver:)`` returned.
    package enum Ending: Equatable {
        /// `deliver` returned `false`, or `stop` was signalled.
        case stopped
        /// The deadline passed.
        case deadlinePassed
        /// The descriptor to wake for became readable.
        case woken
    }

    /// Delivers each destination's answer (by its position in the list given
    /// to `init`), then one per change, until `deliver` returns `false`,
    /// `stop` is signalled, `wake` becomes readable or `deadline` passes.
    /// Sleeps in `poll` in between: nothing runs while nothing changes.
    ///
    /// Called again, it goes on where it stopped: what the kernel and the
    /// resolver said meanwhile is queued, and nothing is delivered twice.
    /// That is how a follower asks a daemon now and then, answering
    /// in-process while it waits, without starting over.
    @discardableResult
    package func run(
        until deadline: ContinuousClock.Instant? = nil, stop: WakeSignal? = nil, wake: Int32 = -1,
        deliver: (Int, DestinationStatus) -> Bool
    ) throws(NetlinkError) -> Ending {
        if summary == nil {
            summary = try watcher.start().summary()
            let now = ContinuousClock.now
            for key in keys { tracker.add(key, now: now) }
            guard try evaluate(deliver) else { return .stopped }
        }
        while true {
            let deadlines = [deadline, tracker.nextDeadline].compactMap { $0 }
            let timeout = deadlines.min().map(pollMilliseconds(until:)) ?? -1
            var descriptors = [
                pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: tracker.resolverDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: resolverFiles?.fileDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stop?.fileDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 {
                guard errno == EINTR else { throw NetlinkError("wait for netlink and the resolver", errno: errno) }
                continue
            }
            let now = ContinuousClock.now
            if descriptors[3].revents != 0 { return .stopped }
            if descriptors[4].revents != 0 { return .woken }
            if let deadline, now >= deadline { return .deadlinePassed }
            var reevaluate = false
            if descriptors[0].revents != 0 {
                let generation = watcher.generation
                let status: NetworkStatus?
                do { status = try watcher.handleReadable() } catch { status = try watcher.reopen() }
                // The way out changed: the resolver may answer differently now.
                if let status, let summary, !status.hasSameSummary(as: summary) {
                    self.summary = status.summary()
                    tracker.resolveAgain()
                }
                reevaluate = watcher.generation != generation
            }
            if descriptors[1].revents != 0, tracker.collectResolutions() { reevaluate = true }
            if descriptors[2].revents != 0, resolverFiles?.takeChanges() == true { tracker.resolveAgain() }
            if tracker.expireResolutions(now: now) { reevaluate = true }
            if reevaluate, !(try evaluate(deliver)) { return .stopped }
        }
    }

    private func evaluate(_ deliver: (Int, DestinationStatus) -> Bool) throws(NetlinkError) -> Bool {
        let changed = Set(try tracker.evaluate(with: watcher))
        for (position, key) in keys.enumerated() where changed.contains(key) {
            guard let status = tracker.status(of: key), deliver(position, status) else { return false }
        }
        return true
    }
}
