import Logging

/// A ``FollowSession``'s in-process half: while no daemon answers (where
/// the source allows), the daemon's own composition of watcher and tracker
/// (``NetworkEngine``) on the session's thread, holding the destinations the
/// session says; while one does, only those the daemon refused. What it
/// computes comes back as events, which the session delivers as it would
/// the daemon's.
final class InProcessFollower {
    /// What the engine computed.
    enum Event: Equatable {
        case status(NetworkStatus)
        case destination(DestinationKey, DestinationStatus)
        /// Netlink failed and was reopened: a problem met and worked around.
        case reopened(after: NetlinkError)
    }

    private let logger: Logger
    private let traceDatagrams: (@Sendable ([UInt8]) -> Void)?
    private var engine: NetworkEngine?
    /// The destinations the engine holds now.
    private var held: Set<DestinationKey> = []

    init(logger: Logger, traceDatagrams: (@Sendable ([UInt8]) -> Void)?) {
        self.logger = logger
        self.traceDatagrams = traceDatagrams
    }

    var isRunning: Bool { engine != nil }
    var descriptors: [(input: NetworkEngine.Input, fd: Int32)] { engine?.descriptors ?? [] }
    var nextDeadline: ContinuousClock.Instant? { engine?.nextDeadline }
    /// Its status, the first or the last it computed.
    var lastStatus: NetworkStatus? { engine?.lastStatus }

    /// Starts the engine unless it runs: netlink's snapshot, then changes.
    func start() throws(NetlinkError) {
        guard engine == nil else { return }
        let started = try NetworkEngine(source: .inProcess, logger: logger)
        if let traceDatagrams { started.watcher.traceDatagrams(traceDatagrams) }
        _ = try started.start()
        engine = started
        held = []
    }

    func stop() {
        engine = nil
        held = []
    }

    /// Makes the engine hold `wanted` (in the order given): a destination it
    /// starts holding is answered at once.
    func hold(_ wanted: [DestinationKey], now: ContinuousClock.Instant) throws(NetlinkError) -> [Event] {
        guard let engine else { return [] }
        let keys = Set(wanted)
        for key in held.subtracting(keys) { engine.remove(key) }
        let added = wanted.filter { !held.contains($0) }
        held = keys
        guard !added.isEmpty else { return [] }
        _ = try engine.add(added, now: now)
        return added.compactMap { key in engine.tracker.status(of: key).map { .destination(key, $0) } }
    }

    /// The session stopped following `key`.
    func drop(_ key: DestinationKey) {
        if held.remove(key) != nil { engine?.remove(key) }
    }

    /// One of its descriptors is ready.
    func handle(_ input: NetworkEngine.Input, now: ContinuousClock.Instant) throws(NetlinkError) -> [Event] {
        guard let engine else { return [] }
        let outcome = try engine.handle(input, now: now)
        return (outcome.reopenedAfter.map { [.reopened(after: $0)] } ?? []) + (outcome.status.map { [.status($0)] } ?? [])
    }

    /// Once per wake-up: the status, when a route it rests on expired.
    func expireRoutes(now: ContinuousClock.Instant) throws(NetlinkError) -> [Event] {
        try engine?.expireRoutes(now: now).map { [.status($0)] } ?? []
    }

    /// Once per wake-up, after the routes: the destinations whose answers changed.
    func evaluateDestinations(now: ContinuousClock.Instant) throws(NetlinkError) -> [Event] {
        guard let engine else { return [] }
        return try (engine.evaluateDestinations(now: now) ?? []).filter(held.contains).compactMap { key in
            engine.tracker.status(of: key).map { .destination(key, $0) }
        }
    }
}
