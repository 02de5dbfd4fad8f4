import Logging

/// The host's network and the destinations watched on it, composed once: a
/// ``NetworkWatcher`` for the status, a ``DestinationTracker`` whose lookups
/// go through the watcher's query socket and interface table, and a watch on
/// the resolver's files in `/etc`. The daemon's loop drives one, and so does
/// a client session while no daemon answers, so that an answer computed
/// in-process is the daemon's answer.
///
/// The owner waits on ``descriptors``, hands each ready one to
/// ``handle(_:now:)``, publishes the statuses it returns, and once per
/// wake-up calls ``evaluateDestinations(now:)``: the destinations are looked
/// up again only when something they rest on moved (a netlink batch that
/// could change a lookup, a name's addresses, a resolution's deadline), and
/// only the answers that changed come back. Not thread-safe: one loop owns it.
package final class NetworkEngine {
    /// The engine's inputs, each a descriptor of its own, for its owner to
    /// tell apart (not a ``StatusSource``: where a status comes from).
    package enum Input: CaseIterable, Sendable, Hashable {
        /// Netlink notifications (``NetworkWatcher``).
        case netlink
        /// Finished name resolutions (``DestinationTracker``).
        case resolver
        /// `/etc/resolv.conf`, `/etc/hosts` or `/etc/nsswitch.conf` changed,
        /// or systemd-resolved's servers.
        case resolverFiles
    }

    package let watcher: NetworkWatcher
    package let tracker: DestinationTracker
    /// Made at start: the name servers judged in every status come from
    /// these files, and watched names resolve again when they change.
    private var resolverFiles: FileChangeWatch?
    private let source: StatusSource
    private let logger: Logger
    /// Descriptors an epoll owner has not been told of yet.
    private var newDescriptors: [(input: Input, fd: Int32)] = []
    /// A name's addresses changed since the destinations were last evaluated:
    /// its entries are asked again whatever netlink said.
    private var namesChanged = false

    /// Subscribes to netlink at once (see ``NetworkWatcher/init(source:logger:)``);
    /// ``start()`` takes the first snapshot.
    package init(source: StatusSource, logger: Logger) throws(NetlinkError) {
        watcher = try NetworkWatcher(source: source, logger: logger)
        do {
            tracker = try DestinationTracker(source: source, firstSeq: NetworkWatcher.firstSequenceNumber())
        } catch {
            throw NetlinkError("start the resolver (\(error.operation))", errno: error.errno)
        }
        self.source = source
        self.logger = logger
    }

    /// Takes the first snapshot: the first status to publish.
    package func start() throws(NetlinkError) -> NetworkStatus {
        watchResolverFiles()
        _ = try watcher.setResolverServers(ResolverConfiguration.current().servers)
        let first = try watcher.start()
        published(first)
        watcher.destinationsEvaluated()
        return first
    }

    /// What to wait on for readability, each under the input ``handle(_:now:)``
    /// takes. One changes: the netlink socket, when a failing one is
    /// reopened (``takeNewDescriptors()`` says when).
    package var descriptors: [(input: Input, fd: Int32)] {
        // Labelled as returned: an unlabelled array is converted element by
        // element, through a dynamic cast, on every wake-up (callgrind). Room
        // for all three first: a literal of two grew for the third.
        var descriptors: [(input: Input, fd: Int32)] = []
        descriptors.reserveCapacity(3)
        descriptors.append((.netlink, watcher.fileDescriptor))
        descriptors.append((.resolver, tracker.resolverDescriptor))
        if let resolverFiles { descriptors.append((.resolverFiles, resolverFiles.fileDescriptor)) }
        return descriptors
    }

    /// The descriptors that came since the last call, for an owner that
    /// registers them (an epoll's); a closed one left the poll by itself.
    package func takeNewDescriptors() -> [(input: Input, fd: Int32)] {
        defer { newDescriptors.removeAll() }
        return newDescriptors
    }

    /// What reading a ready input brought.
    package struct Outcome {
        /// A status to publish: the published state changed.
        package var status: NetworkStatus?
        /// The netlink socket failed so, and was replaced (its descriptor
        /// is one of ``takeNewDescriptors()``).
        package var reopenedAfter: NetlinkError?
    }

    /// Reads what `input` has. A netlink socket that fails other than by
    /// an overrun (which the watcher resynchronises from) is reopened; only
    /// a failure to reopen it is thrown.
    package func handle(_ input: Input, now: ContinuousClock.Instant) throws(NetlinkError) -> Outcome {
        switch input {
        case .netlink:
            return try reopeningOnFailure { () throws(NetlinkError) in try watcher.handleReadable() }
        case .resolver:
            if tracker.collectResolutions() { namesChanged = true }
            return Outcome()
        case .resolverFiles:
            guard resolverFiles?.takeChanges() == true else { return Outcome() }
            tracker.resolveAgain()
            let servers = ResolverConfiguration.current().servers
            // The servers are kept even when their lookups fail: the
            // reopened sockets' first evaluation judges them.
            return try reopeningOnFailure { () throws(NetlinkError) in try watcher.setResolverServers(servers) }
        }
    }

    /// What `evaluate` publishes; where netlink fails other than by an
    /// overrun, the sockets are reopened and the state resynchronised, and
    /// only a failure to reopen them is thrown.
    private func reopeningOnFailure(_ evaluate: () throws(NetlinkError) -> NetworkStatus?) throws(NetlinkError) -> Outcome {
        var outcome = Outcome()
        do {
            outcome.status = try evaluate()
        } catch {
            logger.error("netlink failed; reopening its sockets and resynchronising", metadata: ["error": "\(error)"])
            outcome.status = try watcher.reopen()
            outcome.reopenedAfter = error
            newDescriptors.append((.netlink, watcher.fileDescriptor))
        }
        if let status = outcome.status { published(status) }
        return outcome
    }

    /// Takes in what the connectivity check found; the status to publish
    /// when that changed it.
    package func apply(_ findings: ConnectivityFindings) -> NetworkStatus? {
        guard let status = watcher.apply(findings) else { return nil }
        published(status)
        return status
    }

    /// Takes in the answers of the destinations the daemon watches itself
    /// (held with ``add(_:now:)``, read from ``tracker``); the status to
    /// publish when they changed. `unsent`: the last status returned has
    /// not been published yet (see ``NetworkWatcher/apply(watched:unsent:)``).
    package func apply(watched answers: [DestinationStatus], unsent: Bool) -> NetworkStatus? {
        guard let status = watcher.apply(watched: answers, unsent: unsent) else { return nil }
        published(status)
        return status
    }

    /// A status is published: when the way out changed (a family came or
    /// went, a VPN took the default) or what it reaches did (a portal signed
    /// in to, whose DNS answered for everything), the resolver may answer
    /// differently now, so every watched name resolves again.
    private func published(_ status: NetworkStatus) {
        if let lastStatus, !status.hasSameSummary(as: lastStatus) { tracker.resolveAgain() }
        lastStatus = status
    }

    /// The status published last, whoever was told of it.
    package private(set) var lastStatus: NetworkStatus?

    /// When the owner must wake even if nothing is ready: a route behind the
    /// status expires (``expireRoutes(now:)``), or one behind a destination's
    /// answer, or the first resolution under way times out
    /// (``evaluateDestinations(now:)``). `nil`: nothing is due, no timer.
    package var nextDeadline: ContinuousClock.Instant? { Deadline.earliest(tracker.nextDeadline, watcher.routesExpire) }

    /// Once per wake-up: looks the status's routes up again when one of them
    /// expired (the kernel said nothing), and returns the status to publish
    /// when that changed it.
    package func expireRoutes(now: ContinuousClock.Instant) throws(NetlinkError) -> NetworkStatus? {
        guard let status = try watcher.expireRoutes(now: now) else { return nil }
        published(status)
        return status
    }

    /// Starts watching `keys` (or adds a holder to each) and evaluates them
    /// alone, in one batch of lookups: returns those whose answer changed
    /// (``DestinationTracker/status(of:)`` has it).
    package func add(_ keys: [DestinationKey], now: ContinuousClock.Instant) throws(NetlinkError)
        -> [DestinationKey]
    {
        for key in keys { tracker.add(key, now: now) }
        return try tracker.evaluate(with: watcher, only: keys, now: now)
    }

    /// Watches the resolver's files.
    private func watchResolverFiles() {
        guard resolverFiles == nil else { return }
        do {
            let files = try FileChangeWatch.resolverConfiguration()
            resolverFiles = files
            newDescriptors.append((.resolverFiles, files.fileDescriptor))
        } catch {
            // The daemon's log says it; a client's stderr is the user's.
            logger.log(
                level: source == .daemon ? .warning : .debug,
                "cannot watch /etc for resolver changes; watched names resolve again only when the path changes",
                metadata: ["error": "\(error)"])
        }
    }

    /// Drops one holder of `key`.
    package func remove(_ key: DestinationKey) {
        tracker.remove(key)
    }

    /// Once per wake-up, after every ready input was handled: times out the
    /// resolutions that are due and, when anything a lookup rests on moved,
    /// looks every watched destination up again. Returns the keys whose
    /// answer changed, or `nil` when nothing moved and nothing was looked
    /// up. A failed lookup is thrown and tried again at the next call.
    package func evaluateDestinations(now: ContinuousClock.Instant) throws(NetlinkError) -> [DestinationKey]? {
        // A wait for a name timed out, or a route an answer rests on expired
        // (those answers are asked again whatever the scope).
        let due = tracker.nextDeadline.map { now >= $0 } == true && tracker.takeDue(now: now)
        let moved = namesChanged ? .everything : watcher.movedForDestinations
        guard due || moved != .nothing else { return nil }
        let changed = tracker.isEmpty
            ? [] : try tracker.evaluate(with: watcher, moved: moved, removedIPv4: Array(watcher.removedForDestinations), now: now)
        namesChanged = false
        watcher.destinationsEvaluated()
        return changed
    }
}
