import Logging
import Synchronization

/// Follows the host's network from a Swift program: the current status, an
/// async sequence of changes, and callbacks for code that is not async.
///
/// ```swift
/// let monitor = ReachabilityMonitor()                  // .automatic
/// for try await status in monitor.statuses() {         // the current status first
///     print(status.online ? "online" : "offline", "from the", status.source)
/// }
///
/// let subscription = monitor.onChange { status in updateBanner(status.online) }
/// subscription.cancel()
/// ```
///
/// Cancelling the monitor, or letting the last reference go, closes its socket
/// and stops its tasks.
public final class ReachabilityMonitor: Sendable {
    /// Where statuses come from.
    public enum Source: Sendable, Hashable {
        /// The daemon if one answers, otherwise the in-process monitor, switching
        /// back to the daemon when it returns. The default. A daemon that stops
        /// answering (a stopped process keeps its connections) is noticed
        /// within 1.5 s of the next change the kernel reports.
        case automatic
        /// Only the daemon. While it is away (gone, or not answering)
        /// nothing is delivered and ``ReachabilityMonitor/lastError`` says
        /// why; on its return the current status is, at once.
        case daemon
        /// Only the in-process netlink monitor.
        case embedded
    }

    /// How long to wait between attempts to reach the daemon: doubling from
    /// `initial` up to `maximum`, back to `initial` once the daemon has sent a
    /// status (a connection it accepts but never answers, or refuses with
    /// `too_many_clients`, is a failed attempt).
    public struct Backoff: Sendable, Hashable {
        /// The wait after the first failure.
        public var initial: Duration
        /// The longest wait, however many failures follow.
        public var maximum: Duration

        /// Waits of `initial`, doubling after each failure up to `maximum`.
        public init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
            self.initial = initial
            self.maximum = maximum
        }

        /// The wait before attempt `attempt` (0: the first retry): every backoff
        /// in reachd, the placeholder engine's retries and the connectivity
        /// check's included.
        package func delay(attempt: Int) -> Duration {
            var delay = initial
            for _ in 0..<attempt where delay < maximum { delay *= 2 }
            return min(delay, maximum)
        }
    }

    /// Where this monitor takes its statuses from.
    public let source: Source
    /// The daemon sockets it tries, in order.
    private let socketPaths: [String]
    private let hub: StatusHub
    /// Ends the follower's thread.
    private let stop: WakeSignal?

    /// Starts following the network at once; the first status arrives within
    /// milliseconds (``firstStatus()``).
    ///
    /// - Parameters:
    ///   - source: the daemon, in-process netlink, or the daemon when it
    ///     answers and netlink meanwhile (the default).
    ///   - socketPath: the daemon's socket; by default `$REACHD_SOCKET`, then this
    ///     user's and the system daemon's paths (``SocketPath/forClients(environment:isRoot:)``).
    ///   - detail: `.summary` (the default) delivers statuses without the
    ///     interface list, and only when whether and how the host is online
    ///     changed: a container's veth appearing wakes nobody. `.full` fills
    ///     ``NetworkStatus/interfaces`` and delivers every change of it too.
    ///   - backoff: how long to wait between attempts to reach the daemon.
    ///   - logger: where failures to reach the daemon are logged, once each.
    public init(
        source: Source = .automatic, socketPath: String? = nil, detail: StatusDetail = .summary,
        backoff: Backoff = Backoff(),
        logger: Logger = Logger(label: "reachd.monitor")
    ) {
        self.source = source
        let hub = StatusHub()
        self.hub = hub
        let paths = SocketPath.forClients(orOnly: socketPath)
        socketPaths = paths
        let stop = try? WakeSignal()
        self.stop = stop
        guard let stop else {
            hub.finish(throwing: SystemError("pipe"))
            return
        }
        // A thread, not a task: it sleeps in poll, and a status reaches the
        // listeners' streams straight from the socket that brought it.
        startDetachedThread {
            let follower = StatusFollower(
                source: source, socketPaths: paths, detail: detail, backoff: backoff, logger: logger, stop: stop,
                recordError: { hub.record($0) })
            do {
                try follower.run { update in
                    // A line that doesn't decode ends the subscription in the follower.
                    if let status = try? update.status() { hub.publish(status) }
                    return !hub.isFinished
                }
                hub.finish(throwing: nil)
            } catch {
                hub.finish(throwing: error)
            }
        }
    }

    deinit {
        cancel()
    }

    /// Asks once, without following: the current status from the first
    /// daemon that answers, else (where `source` allows) computed in-process
    /// from one netlink snapshot, with ``NetworkStatus/source`` saying which.
    ///
    /// ```swift
    /// let now = try await ReachabilityMonitor.currentStatus()
    /// print(now.online ? "online" : "offline", "according to the", now.source)
    /// ```
    ///
    /// - Parameters:
    ///   - source: `.automatic` (the default) falls back in-process; `.daemon`
    ///     throws when no daemon answers; `.embedded` asks none.
    ///   - socketPath: the daemon's socket; by default the paths
    ///     ``SocketPath/forClients(environment:isRoot:)`` lists, in turn.
    ///   - detail: `.full` (the default) includes the interface list: one
    ///     answer costs the same either way, and only a monitor that follows
    ///     changes is woken less by `.summary`.
    ///   - timeout: shared by the daemons tried: a stopped one costs at most this.
    /// - Throws: ``StatusQueryError`` when no allowed source answers.
    public static func currentStatus(
        source: Source = .automatic, socketPath: String? = nil, detail: StatusDetail = .full,
        timeout: Duration = DaemonClient.defaultTimeout
    ) async throws -> NetworkStatus {
        let query = StatusQuery(source: source, socketPaths: SocketPath.forClients(orOnly: socketPath), detail: detail)
        // Blocking for up to `timeout`: on a thread of its own, not one of the
        // runtime's few cooperative threads.
        return try await withCheckedThrowingContinuation { continuation in
            startDetachedThread {
                continuation.resume(with: Result { () throws(StatusQueryError) in try query.answer(timeout: timeout).status })
            }
        }
    }

    /// The newest status, or `nil` before the first arrives: right after
    /// `init` it is `nil` for the few milliseconds the first answer takes.
    /// ``firstStatus()`` waits for it.
    public var currentStatus: NetworkStatus? { hub.current }

    /// The current status, waiting for the first one if none has arrived yet.
    ///
    /// ```swift
    /// let monitor = ReachabilityMonitor()
    /// let now = try await monitor.firstStatus()
    /// print(now.online ? "online" : "offline")
    /// ```
    ///
    /// Throws `CancellationError` when the monitor is cancelled first, or what
    /// ended it (a `.daemon` monitor's protocol mismatch).
    public func firstStatus() async throws -> NetworkStatus {
        for try await status in statuses() { return status }
        throw CancellationError()
    }

    /// The last problem met while following the network (the daemon went away,
    /// speaks another protocol version, netlink failed), or `nil`.
    public var lastError: (any Error)? { hub.lastError }

    /// The current status (once known), then one per change. Ends when the
    /// monitor is cancelled; throws when it cannot go on (a `.daemon` monitor
    /// whose daemon speaks another protocol version).
    public func statuses() -> AsyncThrowingStream<NetworkStatus, any Error> {
        hub.subscribe()
    }

    /// Calls `handler` with the current status (once known) and every change,
    /// in order, until the returned subscription is cancelled. The handler runs
    /// on the monitor's own thread, straight from the socket that brought the
    /// status, and involves no tasks: a program that only uses callbacks (a
    /// GLib main loop, a server's own loop) makes no system calls while the
    /// network is quiet. For UI code use ``onChange(onMainActor:)``.
    @discardableResult
    public func onChange(_ handler: @escaping @Sendable (NetworkStatus) -> Void) -> Subscription {
        let id = hub.addHandler(handler)
        let hub = hub
        return Subscription { hub.removeHandler(id) }
    }

    /// Like ``onChange(_:)``, with `handler` called on the main actor, as
    /// NWPathMonitor's `start(queue: .main)` would.
    ///
    /// ```swift
    /// let subscription = monitor.onChange(onMainActor: { status in
    ///     updateBanner(status.online)      // main-actor UI code
    /// })
    /// ```
    @discardableResult
    public func onChange(onMainActor handler: @escaping @MainActor @Sendable (NetworkStatus) -> Void) -> Subscription {
        let stream = statuses()
        let task = Task { @MainActor in
            do {
                for try await status in stream { handler(status) }
            } catch {}
        }
        return Subscription { task.cancel() }
    }

    /// Asks once whether `destination` is reachable, as the kernel would route
    /// this app's packets to it: from the first daemon that answers (its
    /// lookup made as this process's uid), else (where `source` allows) from
    /// this process's own netlink lookups. A name is answered once resolved.
    ///
    /// ```swift
    /// let api = try Destination(parsing: "api.example.com")
    /// let answer = try await ReachabilityMonitor.reachability(of: api)
    /// print(answer.isReachable ? "reachable via \(answer.via!.interface)" : "unreachable")
    /// ```
    ///
    /// - Parameters:
    ///   - destination: the app's server: a host name or an address, and a port.
    ///   - family: only this family's addresses; `nil` (the default): both.
    ///   - source: `.automatic` (the default) falls back in-process; `.daemon`
    ///     throws when no daemon answers; `.embedded` asks none.
    ///   - socketPath: the daemon's socket; by default the paths
    ///     ``SocketPath/forClients(environment:isRoot:)`` lists, in turn.
    ///   - timeout: for reaching a daemon; a name may take the resolver's
    ///     timeout (5 s) on top.
    /// - Throws: ``StatusQueryError`` when no allowed source answers, or the
    ///   daemon refused the request.
    public static func reachability(
        of destination: Destination, family: AddressFamily? = nil, source: Source = .automatic,
        socketPath: String? = nil, timeout: Duration = DaemonClient.defaultTimeout
    ) async throws -> DestinationStatus {
        let query = DestinationQuery(
            source: source, socketPaths: SocketPath.forClients(orOnly: socketPath), family: family)
        return try await withCheckedThrowingContinuation { continuation in
            startDetachedThread {
                continuation.resume(with: Result { () throws(StatusQueryError) in
                    try query.answer([destination], timeout: timeout).statuses[0]
                })
            }
        }
    }

    /// Whether `destination` is reachable, from this monitor's source: its
    /// answer first, then one per change of its state, reason, path or
    /// addresses. Routing changes that leave the answer alone deliver
    /// nothing. Ends when the monitor is cancelled or the sequence is dropped.
    ///
    /// An `.automatic` monitor answers in-process while no daemon does and
    /// goes back to the daemon once it answers again (the answer's
    /// ``DestinationStatus/source`` says which); a name the new source has
    /// yet to resolve keeps its last answer rather than turning `pending`.
    ///
    /// ```swift
    /// let monitor = ReachabilityMonitor()
    /// let api = try Destination(parsing: "api.example.com:443")
    /// for try await answer in monitor.reachability(of: api) {
    ///     print(answer.target, answer.state, answer.via?.interface ?? "-")
    /// }
    /// ```
    public func reachability(
        of destination: Destination, family: AddressFamily? = nil
    ) -> AsyncThrowingStream<DestinationStatus, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: DestinationStatus.self, bufferingPolicy: .bufferingNewest(1))
        let stop = follow(destination, family: family) { status in
            if case .terminated = continuation.yield(status) { return false }
            return true
        } finished: { error in
            continuation.finish(throwing: error)
        }
        continuation.onTermination = { _ in stop() }
        return stream
    }

    /// Follows `destination` on a thread of its own until `deliver` returns
    /// `false`, the returned closure is called or the monitor is cancelled.
    private func follow(
        _ destination: Destination, family: AddressFamily?,
        deliver: @escaping @Sendable (DestinationStatus) -> Bool,
        finished: @escaping @Sendable ((any Error)?) -> Void
    ) -> @Sendable () -> Void {
        let follower: DestinationFollower
        do {
            follower = try DestinationFollower(DestinationQuery(source: source, socketPaths: socketPaths, family: family))
        } catch {
            finished(error)
            return {}
        }
        let forget = hub.onFinish { follower.cancel() }
        startDetachedThread {
            do throws(StatusQueryError) {
                try follower.run([destination]) { deliver($0.status) }
                finished(nil)
            } catch {
                finished(error)
            }
            forget()
        }
        return { follower.cancel() }
    }

    /// Calls `handler` with `destination`'s answer and every change of it,
    /// in order, until the subscription or the monitor is cancelled. The
    /// handler runs on a thread of its own, straight from the socket that
    /// brought the answer; no tasks are involved.
    ///
    /// ```swift
    /// let intranet = try Destination(parsing: "wiki.corp.example")
    /// let subscription = monitor.onChange(of: intranet) { answer in
    ///     print(answer.isReachable ? "wiki reachable" : "wiki unreachable")
    /// }
    /// subscription.cancel()
    /// ```
    @discardableResult
    public func onChange(
        of destination: Destination, family: AddressFamily? = nil,
        _ handler: @escaping @Sendable (DestinationStatus) -> Void
    ) -> Subscription {
        let cancelled = Mutex(false)
        let stop = follow(destination, family: family) { answer in
            guard !cancelled.withLock({ $0 }) else { return false }
            handler(answer)
            return true
        } finished: { _ in }
        return Subscription {
            cancelled.withLock { $0 = true }
            stop()
        }
    }

    /// Stops following the network: closes the socket, stops the netlink thread,
    /// ends every sequence.
    public func cancel() {
        stop?.signal()
        hub.finish(throwing: nil)
    }

    /// A callback registration; cancelling it stops the calls.
    public struct Subscription: Sendable {
        let stop: @Sendable () -> Void

        /// Stops the calls; a call under way finishes.
        public func cancel() { stop() }
    }
}

/// The monitor's shared state: the newest status and everyone listening.
private final class StatusHub: Sendable {
    private struct State {
        var current: NetworkStatus?
        var lastError: (any Error)?
        var listeners: [Int: AsyncThrowingStream<NetworkStatus, any Error>.Continuation] = [:]
        var handlers: [Int: @Sendable (NetworkStatus) -> Void] = [:]
        var nextListener = 0
        var finished = false
        var finishActions: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Mutex(State())
    /// Held while handlers are called, so each sees every status once, in order,
    /// the current one first. Recursive: a handler may register another.
    private let delivery = RecursiveLock()

    var current: NetworkStatus? { state.withLock { $0.current } }
    var lastError: (any Error)? { state.withLock { $0.lastError } }

    func subscribe() -> AsyncThrowingStream<NetworkStatus, any Error> {
        // Latest-state semantics for slow consumers too: only the newest matters.
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: NetworkStatus.self, bufferingPolicy: .bufferingNewest(1))
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextListener
            state.nextListener += 1
            state.listeners[id] = continuation
            if let current = state.current { continuation.yield(current) }
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    /// Registers `handler` and calls it with the current status, if any.
    func addHandler(_ handler: @escaping @Sendable (NetworkStatus) -> Void) -> Int {
        delivery.withLock {
            let (id, current) = state.withLock { state in
                let id = state.nextListener
                state.nextListener += 1
                if !state.finished { state.handlers[id] = handler }
                return (id, state.finished ? nil : state.current)
            }
            if let current { handler(current) }
            return id
        }
    }

    func removeHandler(_ id: Int) {
        state.withLock { _ = $0.handlers.removeValue(forKey: id) }
    }

    /// Passes `status` on to every listener (the follower has dropped repeats).
    func publish(_ status: NetworkStatus) {
        delivery.withLock {
            let handlers = state.withLock { state in
                state.current = status
                for listener in state.listeners.values { listener.yield(status) }
                return state.handlers.sorted { $0.key < $1.key }
            }
            for (id, handler) in handlers where state.withLock({ $0.handlers[id] != nil }) {
                handler(status)
            }
        }
    }

    func record(_ error: any Error) {
        state.withLock { $0.lastError = error }
    }

    func finish(throwing error: (any Error)?) {
        let (listeners, actions) = state.withLock { state in
            state.finished = true
            state.handlers.removeAll()
            defer {
                state.listeners.removeAll()
                state.finishActions.removeAll()
            }
            return (Array(state.listeners.values), Array(state.finishActions.values))
        }
        for listener in listeners { listener.finish(throwing: error) }
        for action in actions { action() }
    }

    /// Runs `action` when the monitor finishes (at once if it has). Returns
    /// what forgets the action, for a follower that ended first.
    func onFinish(_ action: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextListener
            state.nextListener += 1
            state.finishActions[id] = action
            return id
        }
        guard let id else {
            action()
            return {}
        }
        return { [weak self] in self?.state.withLock { _ = $0.finishActions.removeValue(forKey: id) } }
    }
}
