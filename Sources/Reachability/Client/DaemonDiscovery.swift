/// Which daemon a follow session asks next, and when: the sockets in order,
/// less those found to serve another network namespace; the retry schedule;
/// the watch of where the sockets would appear, which stands in for the
/// schedule while none exists; and the rule that a subscription that lasted
/// ``stableSubscription`` was a daemon that worked. Pure: what became of
/// each try in, the next step out. ``FollowState`` acts on it.
struct DaemonDiscovery: Equatable {
    /// A subscription that lasted this long after its first status was a
    /// daemon that worked, and its end (a restart) is retried after the
    /// shortest wait. One that ended sooner, answer or not, backs off, so a
    /// daemon that answers and hangs up (a crash loop) cannot spin the
    /// client, nor restart its in-process engine every 100 ms. The GIO
    /// module's rule too (Tests/ClientSpec/constants.json).
    static let stableSubscription = Duration.seconds(1)

    enum SocketWatch {
        case off
        /// A daemon that is not there is waited for without a timer, and
        /// tried the moment its socket is made.
        case on
        /// The watch could not be made (out of inotify instances, say): the
        /// schedule, until a daemon answers.
        case failed
    }

    /// What follows a daemon's failure, besides in-process where the
    /// source allows.
    enum AfterFailure: Equatable {
        /// No socket yet, and the watch already says when one appears: said
        /// before, and nothing to schedule.
        case awaitTheWatch
        /// No socket at any path: watch where they would appear, then try
        /// the first once more, for a socket made before the watch was set.
        case watch(paths: [String])
        /// On the schedule; `unwatch`: the watch that stood in for it ends.
        case retry(unwatch: Bool)
        /// Every socket is another network's daemon's: nothing to try, and
        /// no timer.
        case nothingToAsk
    }

    /// Every socket, in the order they are tried.
    let paths: [String]
    private var retry: RetrySchedule
    /// Daemons found to serve another network namespace: not asked again.
    private var otherNetworks: Set<String> = []
    /// When the daemon followed now first answered.
    private var answeredAt: ContinuousClock.Instant?
    /// Every daemon asked since the last attempt began had no socket at
    /// all (ENOENT). A socket there that refuses (ECONNREFUSED) may be one
    /// bound a moment before its daemon listens, which no watch would
    /// tell: it is asked on the schedule, as a stale one left by a daemon
    /// that crashed.
    private var noneListening = true
    private(set) var socketWatch = SocketWatch.off

    /// Tries `paths`, the first time at `first` (`nil`: not before a failure).
    init(paths: [String], backoff: Backoff, first: ContinuousClock.Instant?) {
        self.paths = paths
        retry = RetrySchedule(backoff, first: first)
    }

    /// The sockets still worth asking, in order.
    var pathsToAsk: [String] { paths.filter { !otherNetworks.contains($0) } }

    /// When the next try is due; `nil` while none is scheduled.
    var due: ContinuousClock.Instant? { retry.due }

    /// A run starts at `now`: tried at once, with no watch. What was found
    /// of other networks stands.
    mutating func restart(at now: ContinuousClock.Instant) {
        retry = RetrySchedule(retry.backoff, first: now)
        socketWatch = .off
    }

    /// The run ended, and its loop closed what it watched.
    mutating func closed() { socketWatch = .off }

    /// Whether a try is due at `now`; if so it is taken off the schedule.
    mutating func takeDueAttempt(_ now: ContinuousClock.Instant) -> Bool { retry.takeIfDue(now) }

    /// A try begins: the first socket worth asking, if any.
    mutating func beginAttempt() -> String? {
        guard let first = pathsToAsk.first else { return nil }
        noneListening = true
        return first
    }

    /// A daemon took the connection: something listens. `true` when the
    /// watch that stood in for the schedule ends.
    mutating func connected() -> Bool {
        noneListening = false
        return stopWatching()
    }

    /// Connecting to `path` failed: the next socket to try, if any, and
    /// whether the failure was said already (no socket, asked again once
    /// the watch was set).
    mutating func connectFailed(_ path: String, _ error: DaemonClientError) -> (next: String?, saidAlready: Bool) {
        let nothingListens = Self.noSocket(error)
        if !nothingListens { noneListening = false }
        let next = pathsToAsk.drop { $0 != path }.dropFirst().first
        return (next, nothingListens && socketWatch == .on)
    }

    /// The daemon at `path` serves another network namespace.
    mutating func servesAnotherNetwork(_ path: String) { otherNetworks.insert(path) }

    /// The daemon answered, at `now`.
    mutating func answered(at now: ContinuousClock.Instant) { answeredAt = now }

    /// The daemon followed was dropped, for whatever reason.
    mutating func dropped() { answeredAt = nil }

    /// The daemon followed failed at `now` with `error`: the stable rule,
    /// then what follows.
    mutating func failed(_ error: DaemonClientError, now: ContinuousClock.Instant) -> AfterFailure {
        if let answeredAt, now - answeredAt >= Self.stableSubscription { retry.succeeded() }
        answeredAt = nil
        let nothingListens = Self.noSocket(error) && noneListening
        if nothingListens, socketWatch == .on { return .awaitTheWatch }
        let toAsk = pathsToAsk
        guard !toAsk.isEmpty else { return .nothingToAsk }
        if nothingListens, socketWatch == .off {
            socketWatch = .on
            noneListening = true
            return .watch(paths: toAsk)
        }
        let unwatch = stopWatching()
        retry.failed(now: now)
        return .retry(unwatch: unwatch)
    }

    /// Something happened where a socket would appear: the watch is gone,
    /// and the daemon is tried now, then after the shortest wait (its socket
    /// may be a moment from listening).
    mutating func socketsChanged(_ now: ContinuousClock.Instant) {
        socketWatch = .off
        retry.succeeded()
        retry.tryAgain(at: now)
    }

    /// The watch could not be made: the schedule. The try queued after it
    /// still runs, and finds the schedule.
    mutating func watchFailed() { socketWatch = .failed }

    /// Try again at `now` (a daemon that stopped answering answers again).
    mutating func tryAgain(at now: ContinuousClock.Instant) { retry.tryAgain(at: now) }

    /// Netlink failed in-process: it is tried again with the next try,
    /// scheduled now unless one is.
    mutating func scheduleUnlessDue(_ now: ContinuousClock.Instant) {
        if retry.due == nil { retry.failed(now: now) }
    }

    /// Ends a watch that is on; `true` when there was one.
    private mutating func stopWatching() -> Bool {
        guard socketWatch == .on else { return false }
        socketWatch = .off
        return true
    }

    /// No socket at the path at all: what a watch of its directory tells the
    /// end of.
    private static func noSocket(_ error: DaemonClientError) -> Bool {
        if case .notRunning(_, let cause) = error { cause.isNoSuchFile } else { false }
    }
}
