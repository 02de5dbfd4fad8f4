/// Chooses what a list screen shows (rows, a spinner, "no data", "no network",
/// "sign in" or a failure) from the network, the list's content and its load
/// lifecycle, without flicker.
///
/// A value with no clock inside: every input carries the instant it happened,
/// and when ``nextDeadline`` passes the app calls ``advance(to:)``. Each call
/// returns the events it caused, in order; equal inputs cause none.
/// ``PlaceholderController`` drives it with a real clock.
///
/// ```swift
/// var engine = PlaceholderEngine()
/// var events = engine.loadStarted(.initial, generation: 1, at: .now)   // [] for 500 ms
/// events += engine.loadSucceeded(.initial, generation: 1, content: .items(0), at: .now)
/// engine.shown?.kind                                                    // .noData
/// ```
public struct PlaceholderEngine: Sendable {
    public typealias Instant = ContinuousClock.Instant

    public let configuration: PlaceholderConfiguration
    /// What is on screen; `nil` before anything is shown (a blank screen, not a spinner).
    public private(set) var shown: PlaceholderState?

    private var inputs = PlaceholderInputs()
    /// The network as last reported, before the offline grace.
    private var reportedNetwork: NetworkCondition = .unknown
    /// When a usable network was reported lost, while its grace runs.
    private var networkLostAt: Instant?
    /// The newest generation any load started with, and the floor below which
    /// completions are stale (raised by refreshes and resets).
    private var newestGeneration = Int.min
    private var staleBelow = Int.min
    /// When `loading` was first decided but not yet shown.
    private var loadingDecidedAt: Instant?
    private var loadingShownAt: Instant?
    private var retryAttempts = 0
    private var retryDueAt: Instant?

    public init(configuration: PlaceholderConfiguration = PlaceholderConfiguration()) {
        self.configuration = configuration
        inputs.headerOnlySections = configuration.headerOnlySections
    }

    /// When the engine next needs ``advance(to:)``, if ever.
    public var nextDeadline: Instant? {
        [
            networkLostAt.map { $0 + configuration.offlineGrace },
            loadingDecidedAt.map { $0 + configuration.loadingDelay },
            shown?.kind == .loading ? loadingShownAt.map { $0 + configuration.loadingMinimum } : nil,
            retryDueAt,
        ].compactMap { $0 }.min()
    }

    // MARK: Inputs

    public mutating func networkChanged(_ condition: NetworkCondition, at now: Instant) -> [PlaceholderEvent] {
        let before = inputs.network
        reportedNetwork = condition
        if before == .online && !condition.isUsable {
            // Online to offline: only after the grace period.
            if networkLostAt == nil { networkLostAt = now }
        } else {
            // Coming back, the first news, or one kind of down to another: at once.
            inputs.network = condition
            networkLostAt = nil
        }
        if !before.isUsable && inputs.network.isUsable && shownInvitesRetry {
            retryDueAt = now + configuration.retryDelay(afterAttempts: retryAttempts)
        }
        return update(at: now)
    }

    public mutating func contentChanged(_ content: ListContent, at now: Instant) -> [PlaceholderEvent] {
        inputs.content = content
        return update(at: now)
    }

    /// A load began. Generations increase across all loads of the list.
    public mutating func loadStarted(_ kind: LoadKind, generation: Int, at now: Instant) -> [PlaceholderEvent] {
        newestGeneration = max(newestGeneration, generation)
        if kind.replacesContent {
            // A completion older than the newest started refresh is stale.
            staleBelow = max(staleBelow, generation)
            inputs.refreshInFlight = generation
        } else {
            inputs.appendFooter = .loading
        }
        return update(at: now)
    }

    /// A load succeeded. `content`: the list as the result left it, applied in
    /// the same step (so neither "refreshing" rows nor an empty list flash in
    /// between). `fromCache`: the answer came from a local cache, not the
    /// server. `reachedEnd`: an append found no further pages.
    public mutating func loadSucceeded(
        _ kind: LoadKind, generation: Int, content: ListContent? = nil, fromCache: Bool = false,
        reachedEnd: Bool = false, at now: Instant
    ) -> [PlaceholderEvent] {
        guard generation >= staleBelow else { return [] }
        if let content { inputs.content = content }
        if kind.replacesContent {
            inputs.refreshInFlight = nil
            inputs.lastRefresh = .succeeded(fromCache: fromCache)
            if !fromCache { retryAttempts = 0 }
        } else {
            inputs.appendFooter = reachedEnd ? .endReached : nil
        }
        return update(at: now)
    }

    public mutating func loadFailed(
        _ kind: LoadKind, generation: Int, _ failure: LoadFailure, at now: Instant
    ) -> [PlaceholderEvent] {
        guard generation >= staleBelow else { return [] }
        if kind.replacesContent {
            inputs.refreshInFlight = nil
            // A cancelled load keeps whatever was there before it.
            if failure != .cancelled { inputs.lastRefresh = .failed(failure) }
        } else {
            inputs.appendFooter = failure == .cancelled ? nil : .failed(failure)
        }
        return update(at: now)
    }

    /// A new query or filter: forget every result, and ignore completions of
    /// loads started before now.
    public mutating func reset(at now: Instant) -> [PlaceholderEvent] {
        staleBelow = newestGeneration == .max ? .max : newestGeneration + 1
        inputs.refreshInFlight = nil
        inputs.lastRefresh = nil
        inputs.appendFooter = nil
        retryDueAt = nil
        return update(at: now)
    }

    /// Shows `kind` whatever the inputs say; `nil` lifts the override.
    public mutating func force(_ kind: PlaceholderKind?, at now: Instant) -> [PlaceholderEvent] {
        inputs.forced = kind
        return update(at: now)
    }

    /// Shows the list itself, never a placeholder, while `suppressed`.
    public mutating func suppressPlaceholders(_ suppressed: Bool, at now: Instant) -> [PlaceholderEvent] {
        inputs.suppressed = suppressed
        return update(at: now)
    }

    /// Applies what time alone changes: the end of the offline grace, of the
    /// loading delay or minimum, and a retry that fell due.
    public mutating func advance(to now: Instant) -> [PlaceholderEvent] {
        update(at: now)
    }

    // MARK: Deciding

    private var shownInvitesRetry: Bool {
        switch shown?.kind {
        case .noNetwork, .signInRequired: true
        case .failed(let failure): failure.isNetworkClass
        case .content, .loading, .noData, nil: false
        }
    }

    private mutating func update(at now: Instant) -> [PlaceholderEvent] {
        if let lostAt = networkLostAt, now >= lostAt + configuration.offlineGrace {
            inputs.network = reportedNetwork
            networkLostAt = nil
        }
        var events = show(paced(PlaceholderRules.decide(inputs), at: now), at: now)
        if let due = retryDueAt, now >= due {
            retryDueAt = nil
            if shownInvitesRetry && inputs.network.isUsable {
                retryAttempts += 1
                events.append(.retryRequested(attempt: retryAttempts))
            }
        }
        return events
    }

    /// Holds back a spinner for the loading delay, and keeps one that shows for
    /// the loading minimum: what is actually shown now.
    private mutating func paced(_ decided: PlaceholderState, at now: Instant) -> PlaceholderState? {
        let showingLoading = shown?.kind == .loading
        if decided.kind == .loading {
            if showingLoading { return decided }
            let since = loadingDecidedAt ?? now
            loadingDecidedAt = since
            return now >= since + configuration.loadingDelay ? decided : shown
        }
        loadingDecidedAt = nil
        if showingLoading, let shownAt = loadingShownAt, now < shownAt + configuration.loadingMinimum {
            return shown
        }
        return decided
    }

    private mutating func show(_ next: PlaceholderState?, at now: Instant) -> [PlaceholderEvent] {
        guard let next, next != shown else { return [] }
        let previous = shown
        shown = next
        if next.kind == .loading {
            if previous?.kind != .loading { loadingShownAt = now }
            loadingDecidedAt = nil
        } else {
            loadingShownAt = nil
        }
        // Any visible change (kind, decoration, refreshing) is a transition;
        // `next != shown` above made equal inputs a no-op.
        guard let previous else { return [.willAppear(next), .didAppear(next)] }
        return [.willDisappear(previous), .willAppear(next), .didDisappear(previous), .didAppear(next)]
    }
}
