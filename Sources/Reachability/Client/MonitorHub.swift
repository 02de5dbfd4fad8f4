import Synchronization

/// A monitor's registrations: everyone listening to the status or to a
/// destination, with the newest answer of each for whoever comes next. The
/// session's thread feeds it (``take(_:)``); any thread registers. A
/// destination's first registration asks the session to follow it, its last
/// one leaving to stop: one watch per destination, however many listen.
///
/// Every kind of registration (a status stream, a path-change stream, a
/// callback, each for the status or a destination) is one ``Listener`` on
/// one ``Topic``: one table, one order of delivery, one way to end.
final class MonitorHub: Sendable {
    /// What a registration listens to.
    enum Topic: Hashable {
        case status
        case destination(DestinationKey)
    }

    /// An answer, on its topic.
    enum Answer: Sendable {
        case status(NetworkStatus)
        case destination(DestinationKey, DestinationStatus)

        var topic: Topic {
            switch self {
            case .status: .status
            case .destination(let key, _): .destination(key)
            }
        }

        var status: NetworkStatus? { if case .status(let status) = self { status } else { nil } }
        var destinationStatus: DestinationStatus? { if case .destination(_, let status) = self { status } else { nil } }
    }

    /// How a registration hears. A stream is fed under the state lock: a
    /// yield never blocks, and a stream never waits for a handler. A handler
    /// is called outside it, under ``delivery``.
    enum Listener: Sendable {
        case stream(yield: @Sendable (Answer) -> Void, finish: @Sendable (ReachabilityError?) -> Void)
        case handler(@Sendable (Answer) -> Void)
    }

    private struct State {
        var current: NetworkStatus?
        /// The newest answer of each destination someone listens to.
        var latest: [DestinationKey: DestinationStatus] = [:]
        /// Who listens to each topic, in the order they came; a topic
        /// nobody listens to has no entry.
        var listeners: [Topic: [(id: Int, listener: Listener)]] = [:]
        /// Each registration's topic, for its removal.
        var topics: [Int: Topic] = [:]
        var lastError: ReachabilityError?
        var nextID = 0
        var finished = false
        /// What ended the monitor, for whoever registers after.
        var ending: ReachabilityError?

        /// What a registration on `topic` hears first: what changed before
        /// it came is no news to it.
        func newest(_ topic: Topic) -> Answer? {
            switch topic {
            case .status: current.map { .status($0.asFirst()) }
            case .destination(let key): latest[key].map { .destination(key, $0) }
            }
        }
    }

    private let state = Mutex(State())
    /// Held while handlers are called, so each sees every answer once, in
    /// order, the newest one first. Recursive: a handler may register another.
    private let delivery = RecursiveLock()
    /// `nil` when the session could not start.
    private let remote: FollowSession.Remote?

    init(remote: FollowSession.Remote?) {
        self.remote = remote
    }

    var current: NetworkStatus? { state.withLock { $0.current } }
    var lastError: ReachabilityError? { state.withLock { $0.lastError } }

    /// Takes what the session delivers; returns whether to go on.
    func take(_ update: FollowSession.Update) -> Bool {
        switch update {
        case .status(let update):
            // A line that doesn't decode ends the subscription in the session.
            if let status = try? update.status() { publish(.status(status)) }
        case .destination(let key, let status, _):
            publish(.destination(key, status))
        case .destinationFailed(let key, let error):
            fail(key, error)
        case .problem(let error):
            state.withLock { $0.lastError = error }
        case .following:
            // Each answer says its source.
            break
        }
        return state.withLock { !$0.finished }
    }

    /// A stream of what `topic` hears, as `yield` passes it on, kept until
    /// it ends or the monitor does.
    func stream<Element: Sendable>(
        _ topic: Topic, bufferingNewest limit: Int,
        _ yield: @escaping @Sendable (Answer, AsyncThrowingStream<Element, any Error>.Continuation) -> Void
    ) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(limit))
        let id = newRegistration()
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        add(id, topic, .stream(yield: { yield($0, continuation) }, finish: { continuation.finish(throwing: $0) }))
        return stream
    }

    /// Calls `handler` with what `topic` hears, the newest answer first,
    /// until the subscription is cancelled.
    func handler(_ topic: Topic, _ handler: @escaping @Sendable (Answer) -> Void) -> ReachabilityMonitor.Subscription {
        let id = newRegistration()
        delivery.withLock { add(id, topic, .handler(handler)) }
        return ReachabilityMonitor.Subscription { self.remove(id) }
    }

    private func newRegistration() -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// Registers `listener` under `id`, telling it the newest answer at once.
    private func add(_ id: Int, _ topic: Topic, _ listener: Listener) {
        let (newest, ending): (Answer?, ReachabilityError??) = state.withLock { state in
            guard !state.finished else { return (nil, .some(state.ending)) }
            // Under the lock: a follow and an unfollow reach the session in
            // the order the registrations came and went.
            if case .destination(let key) = topic, state.listeners[topic] == nil { remote?.follow(key) }
            state.listeners[topic, default: []].append((id, listener))
            state.topics[id] = topic
            let newest = state.newest(topic)
            if case .stream(let yield, _) = listener, let newest { yield(newest) }
            return (newest, nil)
        }
        switch listener {
        case .stream(_, let finish): if let ending { finish(ending) }
        case .handler(let handler): if let newest { handler(newest) }
        }
    }

    /// Passes `answer` on to everyone listening, in the order they came
    /// (the session has dropped repeats).
    private func publish(_ answer: Answer) {
        delivery.withLock {
            let handlers = state.withLock { state in
                let listening = state.listeners[answer.topic] ?? []
                switch answer {
                case .status(let status): state.current = status
                case .destination(let key, let status): if !listening.isEmpty { state.latest[key] = status }
                }
                var handlers: [(id: Int, handler: @Sendable (Answer) -> Void)] = []
                for (id, listener) in listening {
                    switch listener {
                    case .stream(let yield, _): yield(answer)
                    case .handler(let handler): handlers.append((id, handler))
                    }
                }
                return handlers
            }
            // One cancelled by a handler before it is not called.
            for (id, handler) in handlers where state.withLock({ $0.topics[id] != nil }) { handler(answer) }
        }
    }

    /// The session no longer follows `key`: its listeners end with `error`.
    private func fail(_ key: DestinationKey, _ error: ReachabilityError) {
        let ended: [Listener] = state.withLock { state in
            state.lastError = error
            state.latest[key] = nil
            let listening = state.listeners.removeValue(forKey: .destination(key)) ?? []
            for (id, _) in listening { state.topics[id] = nil }
            return listening.map(\.listener)
        }
        for case .stream(_, let finish) in ended { finish(error) }
    }

    /// Ends registration `id`. A destination's last one asks the session to
    /// stop following it.
    func remove(_ id: Int) {
        // Released outside the lock: a handler may hold the last reference
        // to its monitor, whose deinit finishes the hub, under this lock.
        let removed: Listener? = state.withLock { state in
            guard let topic = state.topics.removeValue(forKey: id),
                let index = state.listeners[topic]?.firstIndex(where: { $0.id == id })
            else { return nil }
            let listener = state.listeners[topic]!.remove(at: index).listener
            guard state.listeners[topic]!.isEmpty else { return listener }
            state.listeners[topic] = nil
            if case .destination(let key) = topic {
                state.latest[key] = nil
                remote?.unfollow(key)
            }
            return listener
        }
        withExtendedLifetime(removed) {}
    }

    /// Ends every registration, with `error` if one ended the monitor.
    func finish(throwing error: ReachabilityError?) {
        let ended: [Listener] = state.withLock { state in
            guard !state.finished else { return [] }
            state.finished = true
            state.ending = error
            if let error { state.lastError = error }
            defer {
                state.listeners.removeAll()
                state.topics.removeAll()
                state.latest.removeAll()
            }
            return state.listeners.values.flatMap { $0.map(\.listener) }
        }
        // Outside the lock: finishing calls each stream's onTermination, which takes it.
        for case .stream(_, let finish) in ended { finish(error) }
    }
}
