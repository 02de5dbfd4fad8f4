import Synchronization

/// A monitor's registrations: everyone listening to the status, and to each
/// destination, with the newest answer of each for whoever comes next. The
/// session's thread feeds it (``take(_:)``); any thread registers. A
/// destination's first registration asks the session to follow it, its last
/// one leaving to stop: one watch per destination, however many listen.
final class MonitorHub: Sendable {
    /// Someone listening to a destination.
    enum Listener: Sendable {
        case stream(AsyncThrowingStream<DestinationStatus, any Error>.Continuation)
        case handler(@Sendable (DestinationStatus) -> Void)
    }

    private struct Destination {
        var latest: DestinationStatus?
        var listeners: [Int: Listener] = [:]
    }

    private struct State {
        var current: NetworkStatus?
        var lastError: ReachabilityError?
        var statusStreams: [Int: AsyncThrowingStream<NetworkStatus, any Error>.Continuation] = [:]
        var statusHandlers: [Int: @Sendable (NetworkStatus) -> Void] = [:]
        /// Told every path change, where a status stream keeps only the
        /// newest status for a slow reader.
        var pathStreams: [Int: AsyncThrowingStream<PathChange, any Error>.Continuation] = [:]
        var destinations: [FollowSession.Key: Destination] = [:]
        /// Which destination each registration listens to.
        var keys: [Int: FollowSession.Key] = [:]
        var nextID = 0
        var finished = false
        /// What ended the monitor, for whoever registers after.
        var ending: ReachabilityError?
    }

    private let state = Mutex(State())
    /// Held while handlers are called, so each sees every answer once, in
    /// order, the current one first. Recursive: a handler may register another.
    private let delivery = RecursiveLock()
    /// `nil` when the session could not start.
    private let remote: FollowSession.Remote?

    init(remote: FollowSession.Remote?) {
        self.remote = remote
    }

    var current: NetworkStatus? { state.withLock { $0.current } }
    var lastError: ReachabilityError? { state.withLock { $0.lastError } }
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Takes what the session delivers; returns whether to go on.
    func take(_ update: FollowSession.Update) -> Bool {
        switch update {
        case .status(let update):
            // A line that doesn't decode ends the subscription in the session.
            if let status = try? update.status() { publish(status) }
        case .destination(let key, let status, _):
            publish(status, of: key)
        case .destinationFailed(let key, let error):
            fail(key, error)
        case .problem(let error):
            state.withLock { $0.lastError = error }
        case .following:
            // Each answer says its source.
            break
        }
        return !isFinished
    }

    func newRegistration() -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    // MARK: The status

    func subscribe() -> AsyncThrowingStream<NetworkStatus, any Error> {
        // Latest-state semantics for slow consumers too: only the newest matters.
        register(\.statusStreams, bufferingNewest: 1) { continuation, current in
            // What changed before it came is no news to it.
            if let current { continuation.yield(current.asFirst()) }
        }
    }

    /// Every path change from now on (``ReachabilityMonitor/pathChanges()``).
    func subscribePathChanges() -> AsyncThrowingStream<PathChange, any Error> {
        register(\.pathStreams, bufferingNewest: 16) { _, _ in }
    }

    /// A stream kept in `streams` until it ends or the monitor does;
    /// `start` is given it and the current status, under the lock.
    private func register<Element: Sendable>(
        _ streams: WritableKeyPath<State, [Int: AsyncThrowingStream<Element, any Error>.Continuation]>,
        bufferingNewest limit: Int,
        start: (AsyncThrowingStream<Element, any Error>.Continuation, NetworkStatus?) -> Void
    ) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(limit))
        let id = newRegistration()
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        let ending: ReachabilityError?? = state.withLock { state in
            guard !state.finished else { return .some(state.ending) }
            state[keyPath: streams][id] = continuation
            start(continuation, state.current)
            return nil
        }
        if let ending { continuation.finish(throwing: ending) }
        return stream
    }

    /// Registers `handler` and calls it with the current status, if any.
    func addHandler(_ handler: @escaping @Sendable (NetworkStatus) -> Void) -> Int {
        let id = newRegistration()
        delivery.withLock {
            let current: NetworkStatus? = state.withLock { state in
                guard !state.finished else { return nil }
                state.statusHandlers[id] = handler
                return state.current
            }
            if let current { handler(current.asFirst()) }
        }
        return id
    }

    /// Passes `status` on to every listener (the session has dropped repeats).
    private func publish(_ status: NetworkStatus) {
        delivery.withLock {
            let handlers = state.withLock { state in
                state.current = status
                for listener in state.statusStreams.values { listener.yield(status) }
                if !state.pathStreams.isEmpty {
                    for change in status.pathChanges {
                        for listener in state.pathStreams.values { listener.yield(change) }
                    }
                }
                return state.statusHandlers.sorted { $0.key < $1.key }
            }
            for (id, handler) in handlers where state.withLock({ $0.statusHandlers[id] != nil }) {
                handler(status)
            }
        }
    }

    // MARK: Destinations

    /// Registers `listener` under `id` for `key`'s answers: the newest at
    /// once, if there is one. The first registration of a destination asks
    /// the session to follow it.
    func add(_ id: Int, following key: FollowSession.Key, _ listener: Listener) {
        delivery.withLock {
            let outcome: (latest: DestinationStatus?, ending: ReachabilityError??) = state.withLock { state in
                guard !state.finished else { return (nil, .some(state.ending)) }
                var destination = state.destinations[key] ?? Destination()
                // Under the lock: a follow and an unfollow reach the session in
                // the order the registrations came and went.
                if state.destinations[key] == nil { remote?.follow(key) }
                destination.listeners[id] = listener
                state.destinations[key] = destination
                state.keys[id] = key
                if case .stream(let continuation) = listener, let latest = destination.latest {
                    continuation.yield(latest)
                }
                return (destination.latest, nil)
            }
            switch listener {
            case .stream(let continuation):
                if let ending = outcome.ending { continuation.finish(throwing: ending) }
            case .handler(let handler):
                if let latest = outcome.latest { handler(latest) }
            }
        }
    }

    private func publish(_ status: DestinationStatus, of key: FollowSession.Key) {
        delivery.withLock {
            let handlers = state.withLock { state -> [(Int, @Sendable (DestinationStatus) -> Void)] in
                guard state.destinations[key] != nil else { return [] }
                state.destinations[key]?.latest = status
                var handlers: [(Int, @Sendable (DestinationStatus) -> Void)] = []
                for (id, listener) in state.destinations[key]!.listeners.sorted(by: { $0.key < $1.key }) {
                    switch listener {
                    case .stream(let continuation): continuation.yield(status)
                    case .handler(let handler): handlers.append((id, handler))
                    }
                }
                return handlers
            }
            for (id, handler) in handlers where state.withLock({ $0.keys[id] != nil }) {
                handler(status)
            }
        }
    }

    /// The session no longer follows `key`: its listeners end with `error`.
    private func fail(_ key: FollowSession.Key, _ error: ReachabilityError) {
        let listeners: [Listener] = state.withLock { state in
            state.lastError = error
            guard let destination = state.destinations.removeValue(forKey: key) else { return [] }
            for id in destination.listeners.keys { state.keys[id] = nil }
            return Array(destination.listeners.values)
        }
        for case .stream(let continuation) in listeners { continuation.finish(throwing: error) }
    }

    // MARK: Either

    /// Ends registration `id`, of the status or a destination. A
    /// destination's last one asks the session to stop following it.
    func remove(_ id: Int) {
        state.withLock { state in
            state.statusHandlers[id] = nil
            state.statusStreams[id] = nil
            state.pathStreams[id] = nil
            guard let key = state.keys.removeValue(forKey: id) else { return }
            state.destinations[key]?.listeners[id] = nil
            if state.destinations[key]?.listeners.isEmpty == true {
                state.destinations[key] = nil
                remote?.unfollow(key)
            }
        }
    }

    /// Ends every registration, with `error` if one ended the monitor.
    func finish(throwing error: ReachabilityError?) {
        let (statusStreams, pathStreams, destinations):
            ([AsyncThrowingStream<NetworkStatus, any Error>.Continuation],
             [AsyncThrowingStream<PathChange, any Error>.Continuation], [Destination]) =
            state.withLock { state in
                guard !state.finished else { return ([], [], []) }
                state.finished = true
                state.ending = error
                if let error { state.lastError = error }
                defer {
                    state.statusStreams.removeAll()
                    state.pathStreams.removeAll()
                    state.statusHandlers.removeAll()
                    state.destinations.removeAll()
                    state.keys.removeAll()
                }
                return (Array(state.statusStreams.values), Array(state.pathStreams.values), Array(state.destinations.values))
            }
        // Outside the lock: finishing calls each stream's onTermination, which takes it.
        for stream in statusStreams { stream.finish(throwing: error) }
        for stream in pathStreams { stream.finish(throwing: error) }
        for case .stream(let continuation) in destinations.flatMap(\.listeners.values) {
            continuation.finish(throwing: error)
        }
    }
}
