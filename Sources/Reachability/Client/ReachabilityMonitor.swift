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
        /// back to the daemon when it returns. The default.
        case automatic
        /// Only the daemon. While it is away nothing is delivered; on its return
        /// the current status is, at once.
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
    private let hub: StatusHub
    private let driver: Task<Void, Never>

    /// Starts following the network at once; the first status arrives within
    /// milliseconds (``firstStatus()``).
    ///
    /// - Parameters:
    ///   - source: the daemon, in-process netlink, or the daemon when it
    ///     answers and netlink meanwhile (the default).
    ///   - socketPath: the daemon's socket; by default `$REACHD_SOCKET`, then this
    ///     user's and the system daemon's paths (``SocketPath/forClients(environment:isRoot:)``).
    ///   - backoff: how long to wait between attempts to reach the daemon.
    ///   - logger: where failures to reach the daemon are logged, once each.
    public init(
        source: Source = .automatic, socketPath: String? = nil, backoff: Backoff = Backoff(),
        logger: Logger = Logger(label: "reachd.monitor")
    ) {
        self.source = source
        let hub = StatusHub()
        self.hub = hub
        let paths = socketPath.map { [$0] } ?? SocketPath.forClients()
        let connector = Connector(source: source, socketPaths: paths, backoff: backoff, logger: logger, hub: hub)
        driver = Task { await connector.run() }
    }

    deinit {
        cancel()
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
    /// on no particular thread; for UI code use ``onChange(onMainActor:)``.
    @discardableResult
    public func onChange(_ handler: @escaping @Sendable (NetworkStatus) -> Void) -> Subscription {
        let stream = statuses()
        let task = Task {
            do {
                for try await status in stream { handler(status) }
            } catch {}
        }
        return Subscription(task: task)
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
        return Subscription(task: task)
    }

    /// Stops following the network: closes the socket, stops the netlink thread,
    /// ends every sequence.
    public func cancel() {
        driver.cancel()
        hub.finish(throwing: nil)
    }

    /// A callback registration; cancelling it stops the calls.
    public struct Subscription: Sendable {
        let task: Task<Void, Never>

        /// Stops the calls; a call under way finishes.
        public func cancel() { task.cancel() }
    }
}

/// The monitor's shared state: the newest status and everyone listening.
private final class StatusHub: Sendable {
    private struct State {
        var current: NetworkStatus?
        var lastError: (any Error)?
        var lastWarned: String?
        var listeners: [Int: AsyncThrowingStream<NetworkStatus, any Error>.Continuation] = [:]
        var nextListener = 0
        var finished = false
    }

    private let state = Mutex(State())

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

    /// Passes `status` on unless it describes the same network, from the same
    /// source, as the current one (a reconnect or restart renumbers statuses).
    /// `clearingWarnings`: the daemon answered, so its next failure is news.
    func publish(_ status: NetworkStatus, clearingWarnings: Bool = false) {
        state.withLock { state in
            if clearingWarnings { state.lastWarned = nil }
            if let current = state.current, current.source == status.source,
                current.describesSameNetwork(as: status) { return }
            state.current = status
            for listener in state.listeners.values { listener.yield(status) }
        }
    }

    /// Records `error` as the last one; returns whether it differs from the
    /// last one recorded since the daemon last answered.
    @discardableResult
    func record(_ error: any Error) -> Bool {
        let description = "\(error)"
        return state.withLock { state in
            state.lastError = error
            defer { state.lastWarned = description }
            return state.lastWarned != description
        }
    }

    func finish(throwing error: (any Error)?) {
        let listeners = state.withLock { state in
            state.finished = true
            defer { state.listeners.removeAll() }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.finish(throwing: error) }
    }
}

/// The loop behind a monitor: connects, reconnects with backoff, and falls back
/// to the in-process monitor as its source allows.
private struct Connector: Sendable {
    let source: ReachabilityMonitor.Source
    let socketPaths: [String]
    let backoff: ReachabilityMonitor.Backoff
    let logger: Logger
    let hub: StatusHub

    func run() async {
        switch source {
        case .embedded: await followEmbedded()
        case .daemon, .automatic: await followDaemon()
        }
    }

    private func followEmbedded() async {
        var attempt = 0
        while !Task.isCancelled {
            do {
                for try await status in EmbeddedMonitor.statuses(logger: logger) {
                    hub.publish(status)
                    attempt = 0
                }
            } catch {
                hub.record(error)
                logger.warning("in-process network monitor failed; restarting it", metadata: ["error": "\(error)"])
            }
            attempt += 1
            try? await Task.sleep(for: backoff.delay(attempt: attempt))
        }
    }

    private func followDaemon() async {
        // Failed attempts since the daemon last sent a status. A bare connect
        // proves nothing: a stopped daemon's kernel queue accepts, and a full
        // daemon accepts to say `too_many_clients`; neither must reset this.
        var failures = 0
        while !Task.isCancelled && !hub.isFinished {
            var subscription = await subscribe()
            if subscription == nil {
                if source == .automatic {
                    // Away, stopped or refusing: follow netlink in-process until it answers again.
                    subscription = await followEmbeddedUntilTheDaemonAnswers(failures: failures)
                } else {
                    try? await Task.sleep(for: backoff.delay(attempt: failures))
                }
                failures += 1
            }
            guard let subscription else { continue }
            failures = 0
            hub.publish(subscription.first, clearingWarnings: true)
            do {
                // Subscribing sends the current status first, so a change made
                // while the daemon was away is delivered at once.
                for try await status in subscription.changes { hub.publish(status) }
            } catch let error as DaemonClientError {
                guard handle(error) else { return }
            } catch {
                hub.record(error)
            }
        }
    }

    /// Runs the in-process monitor while retrying the daemon with backoff,
    /// starting at the delay for `failures`; returns the daemon's subscription
    /// once it answers with a status.
    private func followEmbeddedUntilTheDaemonAnswers(failures: Int) async -> DaemonSubscription? {
        await withTaskGroup(of: DaemonSubscription?.self) { group in
            group.addTask {
                await followEmbedded()
                return nil
            }
            group.addTask {
                var attempt = failures
                while !Task.isCancelled && !hub.isFinished {
                    try? await Task.sleep(for: backoff.delay(attempt: attempt))
                    attempt += 1
                    if let subscription = await subscribe() { return subscription }
                }
                return nil
            }
            defer { group.cancelAll() }
            while let result = await group.next() {
                if let subscription = result { return subscription }
                if Task.isCancelled || hub.isFinished { return nil }
            }
            return nil
        }
    }

    /// The first daemon that sends its current status within
    /// ``DaemonClient/defaultTimeout``, or `nil` when none does (or the error
    /// is final, in which case the monitor has been finished).
    private func subscribe() async -> DaemonSubscription? {
        for path in socketPaths {
            do {
                return try await DaemonClient(socketPath: path).subscribe()
            } catch {
                guard handle(error) else { return nil }
            }
        }
        return nil
    }

    /// Records a daemon error; returns `false` when the monitor cannot go on.
    /// A failure is logged as a warning when it is news, at debug level while it
    /// repeats: a refusing daemon costs one warning, not one per retry.
    private func handle(_ error: DaemonClientError) -> Bool {
        let isNews = hub.record(error)
        let fallback = source == .automatic ? "; following the network in-process meanwhile" : ""
        switch error {
        case .protocolError(.versionMismatch):
            if source == .daemon {
                logger.error("\(error.description)")
                hub.finish(throwing: error)
                return false
            }
            if isNews { logger.warning("\(error.description); following the network in-process instead") }
            return true
        case .notRunning, .closed:
            logger.debug("daemon unavailable", metadata: ["error": "\(error)"])
            return true
        case .timedOut, .connectionFailed, .rejected, .protocolError:
            if isNews {
                logger.warning("\(error.description)\(fallback)")
            } else {
                logger.debug("daemon still unavailable", metadata: ["error": "\(error)"])
            }
            return true
        }
    }
}
