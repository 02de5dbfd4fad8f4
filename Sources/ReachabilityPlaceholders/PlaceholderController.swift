import Reachability
import Synchronization

/// Drives a ``PlaceholderEngine`` with the real clock: stamps every input with
/// the current instant, wakes itself at the engine's next deadline, and
/// delivers the events in order on ``events``.
///
/// ```swift
/// let placeholders = PlaceholderController()
/// placeholders.follow(ReachabilityMonitor())
/// Task {
///     for await event in placeholders.events {
///         switch event {
///         case .didAppear(let state), .updated(let state): render(state, catalog.content(for: state.kind))
///         case .retryRequested: reload()
///         case .willAppear, .willDisappear, .didDisappear: break
///         }
///     }
/// }
/// placeholders.loadStarted(.initial, generation: 1)
/// ```
public final class PlaceholderController: Sendable {
    private struct State {
        var engine: PlaceholderEngine
        var wakeUp: Task<Void, Never>?
        var following: Task<Void, Never>?
        var wakeUps = 0
        /// The newest generation a load started with, through ``load(_:_:)`` or not.
        var newestGeneration = 0
        /// The monitor followed, told of loads that fail on the network
        /// while it says online; `nil` while following something else.
        var monitor: ReachabilityMonitor?
    }

    private let state: Mutex<State>
    private let continuation: AsyncStream<PlaceholderEvent>.Continuation
    /// Every event, in the order the engine produced them.
    public let events: AsyncStream<PlaceholderEvent>

    /// A controller whose engine uses `configuration`.
    public init(configuration: PlaceholderConfiguration = PlaceholderConfiguration()) {
        state = Mutex(State(engine: PlaceholderEngine(configuration: configuration)))
        (events, continuation) = AsyncStream.makeStream(of: PlaceholderEvent.self)
    }

    deinit {
        state.withLock { state in
            state.wakeUp?.cancel()
            state.following?.cancel()
        }
        continuation.finish()
    }

    /// What is on screen now.
    public var shown: PlaceholderState? { state.withLock { $0.engine.shown } }

    /// The network condition as last reported.
    package var network: NetworkCondition { state.withLock { $0.engine.network } }

    /// Feeds the monitor's statuses in as the network condition, keeping the
    /// monitor alive for as long as it is followed: `follow(ReachabilityMonitor())`
    /// works. Following something else stops following this.
    public func follow(_ monitor: ReachabilityMonitor) {
        let statuses = monitor.statuses()
        follow(reportingTo: monitor) { [weak self] in
            for try await status in statuses { self?.statusChanged(status) }
            withExtendedLifetime(monitor) {}
        }
    }

    /// Feeds the reachability of the app's own server in as the network
    /// condition: "no network" when `destination` is unreachable or
    /// unresolved, not when the host lacks a default route, so that an
    /// intranet app behind a VPN shows its list on a host that is otherwise
    /// offline. The host's portal or limited verdict applies only while the
    /// destination leaves through the host's own path out
    /// (``NetworkCondition/init(_:host:)``).
    ///
    /// ```swift
    /// let placeholders = PlaceholderController()
    /// placeholders.follow(ReachabilityMonitor(), destination: try Destination(parsing: "wiki.corp.example"))
    /// ```
    public func follow(_ monitor: ReachabilityMonitor, destination: Destination) {
        let statuses = monitor.statuses()
        let answers = monitor.reachability(of: destination)
        let latest = LatestAnswers()
        follow(reportingTo: monitor) { [weak self] in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { [weak self] in
                    for try await status in statuses {
                        latest.update({ $0.host = status }) { self?.networkChanged($0, portalURL: $1) }
                        self?.takePathChanges(of: status)
                    }
                }
                group.addTask { [weak self] in
                    for try await answer in answers {
                        latest.update({ $0.destination = answer }) { self?.networkChanged($0, portalURL: $1) }
                    }
                }
                try await group.waitForAll()
            }
            withExtendedLifetime(monitor) {}
        }
    }

    /// The newest of both inputs of ``follow(_:destination:)``.
    private final class LatestAnswers: Sendable {
        private let state = Mutex<(host: NetworkStatus?, destination: DestinationStatus?)>((nil, nil))

        /// Applies `change` and hands the condition from the newest host
        /// status and destination answer to `deliver`, nothing before the
        /// destination's first answer. Under the lock: the two inputs'
        /// conditions reach the engine in the order they were made, so the
        /// last one shown is the newest.
        func update(
            _ change: (inout (host: NetworkStatus?, destination: DestinationStatus?)) -> Void,
            deliver: (NetworkCondition, _ portalURL: String?) -> Void
        ) {
            state.withLock { latest in
                change(&latest)
                guard let answer = latest.destination else { return }
                let condition = NetworkCondition(answer, host: latest.host)
                deliver(condition, condition == .portal ? latest.host?.portalURL : nil)
            }
        }
    }

    /// Feeds any sequence of statuses in: a monitor's `ReachabilityMonitor.statuses()`
    /// transformed, or a test's.
    public func follow<Statuses: AsyncSequence & Sendable>(_ statuses: Statuses)
    where Statuses.Element == NetworkStatus {
        follow { [weak self] in
            for try await status in statuses { self?.statusChanged(status) }
        }
    }

    /// A status: its condition, and its path changes.
    private func statusChanged(_ status: NetworkStatus) {
        networkChanged(NetworkCondition(status), portalURL: status.portalURL)
        takePathChanges(of: status)
    }

    /// A handover asks for a retry; a path coming or going is the network's
    /// return or loss, which the condition carries.
    private func takePathChanges(of status: NetworkStatus) {
        if status.pathChanges.contains(where: \.isHandover) { pathChanged() }
    }

    /// Feeds a sequence of network conditions in, for apps that decide the
    /// condition themselves, and for tests.
    public func follow<Conditions: AsyncSequence & Sendable>(_ conditions: Conditions)
    where Conditions.Element == NetworkCondition {
        follow { [weak self] in
            for try await condition in conditions { self?.networkChanged(condition) }
        }
    }

    private func follow(reportingTo monitor: ReachabilityMonitor? = nil, _ body: @escaping @Sendable () async throws -> Void) {
        let task = Task { _ = try? await body() }
        state.withLock { state in
            state.following?.cancel()
            state.following = task
            state.monitor = monitor
        }
    }

    /// How many times the controller woke itself for a deadline: it sleeps
    /// between them, whatever is shown.
    package var wakeUps: Int { state.withLock { $0.wakeUps } }

    /// The network changed (``follow(_:)-(ReachabilityMonitor)`` calls this for you).
    public func networkChanged(_ condition: NetworkCondition, portalURL: String? = nil) {
        apply { $0.networkChanged(condition, portalURL: portalURL, at: $1) }
    }
    /// The way out moved (``follow(_:)-(ReachabilityMonitor)`` calls this for
    /// you); see ``PlaceholderEngine/pathChanged(at:)``.
    public func pathChanged() {
        apply { $0.pathChanged(at: $1) }
    }
    /// The list's rows changed outside a load (an edit, a deletion).
    public func contentChanged(_ content: ListContent) { apply { $0.contentChanged(content, at: $1) } }
    /// A load began; see ``PlaceholderEngine/loadStarted(_:generation:at:)``.
    public func loadStarted(_ kind: LoadKind, generation: Int) {
        state.withLock { $0.newestGeneration = max($0.newestGeneration, generation) }
        apply { $0.loadStarted(kind, generation: generation, at: $1) }
    }
    /// A load succeeded; see
    /// ``PlaceholderEngine/loadSucceeded(_:generation:content:fromCache:reachedEnd:at:)``.
    public func loadSucceeded(
        _ kind: LoadKind, generation: Int, content: ListContent? = nil, fromCache: Bool = false, reachedEnd: Bool = false
    ) {
        apply {
            $0.loadSucceeded(kind, generation: generation, content: content, fromCache: fromCache, reachedEnd: reachedEnd, at: $1)
        }
    }
    /// A load failed; see ``PlaceholderEngine/loadFailed(_:generation:_:at:)``.
    /// A failure the network explains while the followed monitor says
    /// online is reported to it (`ReachabilityMonitor.reportFailure()`):
    /// the daemon checks at once whether the path still works.
    public func loadFailed(_ kind: LoadKind, generation: Int, _ failure: LoadFailure) {
        let monitor = state.withLock { state in
            failure.isNetworkClass && state.engine.network == .online ? state.monitor : nil
        }
        monitor?.reportFailure()
        apply { $0.loadFailed(kind, generation: generation, failure, at: $1) }
    }
    /// Runs one load of the list and reports its lifecycle: started now,
    /// then succeeded with the content `body` returns, or failed as
    /// ``LoadFailure/init(_:)`` reads what it throws. Each call takes the
    /// next generation, so a slow load that a newer one overtook changes
    /// nothing. `body` runs in the caller's isolation: a `@MainActor` app
    /// updates its rows in it.
    ///
    /// ```swift
    /// let placeholders = PlaceholderController()
    /// var items: [String] = []
    /// await placeholders.load(.refresh) {
    ///     let (data, response) = try await URLSession.shared.data(from: url)
    ///     if let failure = LoadFailure(httpStatus: (response as? HTTPURLResponse)?.statusCode ?? 0) { throw failure }
    ///     items = try JSONDecoder().decode([String].self, from: data)
    ///     return .items(items.count)
    /// }
    /// ```
    nonisolated(nonsending) public func load(_ kind: LoadKind, _ body: () async throws -> ListContent) async {
        let generation = state.withLock { state in
            state.newestGeneration += 1
            return state.newestGeneration
        }
        apply { $0.loadStarted(kind, generation: generation, at: $1) }
        do {
            let content = try await body()
            loadSucceeded(kind, generation: generation, content: content)
        } catch {
            loadFailed(kind, generation: generation, LoadFailure(error))
        }
    }

    /// A new query or filter; see ``PlaceholderEngine/reset(at:)``.
    public func reset() { apply { $0.reset(at: $1) } }
    /// Shows `kind` whatever the inputs say; `nil` lifts the override.
    public func force(_ kind: PlaceholderKind?) { apply { $0.force(kind, at: $1) } }
    /// Shows the list itself, never a placeholder, while `suppressed`.
    public func suppressPlaceholders(_ suppressed: Bool) { apply { $0.suppressPlaceholders(suppressed, at: $1) } }

    private func apply(_ change: (inout PlaceholderEngine, ContinuousClock.Instant) -> [PlaceholderEvent]) {
        state.withLock { state in
            // Yielding under the lock keeps the events in the engine's order.
            for event in change(&state.engine, .now) { continuation.yield(event) }
            state.wakeUp?.cancel()
            state.wakeUp = state.engine.nextDeadline.map { deadline in
                Task { [weak self] in
                    guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                    self?.apply { engine, now in engine.advance(to: now) }
                    self?.state.withLock { $0.wakeUps += 1 }
                }
            }
        }
    }
}

