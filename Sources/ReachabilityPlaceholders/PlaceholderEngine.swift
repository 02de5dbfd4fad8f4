import Reachability

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
    /// The instants inputs carry: the continuous clock's, so a test can make its own.
    public typealias Instant = ContinuousClock.Instant

    /// The timings this engine applies.
    public let configuration: PlaceholderConfiguration
    /// What is on screen; `nil` before anything is shown, and after a reset
    /// (a blank screen, not a spinner).
    public private(set) var shown: PlaceholderState?

    private var inputs = PlaceholderInputs()
    /// The network as last reported, before the offline grace.
    private var reportedNetwork: NetworkCondition = .unknown
    /// The network condition as last reported.
    package var network: NetworkCondition { reportedNetwork }
    /// When a usable network was reported lost, while its grace runs.
    private var networkLostAt: Instant?
    /// The network went down (reported) while the refresh in flight ran.
    private var networkDroppedDuringRefresh: NetworkCondition?
    /// The newest generation any load started with, and the floor below which
    /// completions are stale (raised by refreshes and resets).
    private var newestGeneration = Int.min
    private var staleBelow = Int.min
    /// The append (next page) under way, and the footer it replaced, which a
    /// cancelled append puts back.
    private var appendInFlight: Int?
    private var footerBeforeAppend: AppendFooter?
    /// When a spinner was decided but not yet shown; when it was shown, while
    /// its minimum time runs. Both are cleared once they no longer hold
    /// anything back, so ``nextDeadline`` is never in the past.
    private var loadingDecidedAt: Instant?
    private var loadingShownAt: Instant?
    private var retryAttempts = 0
    private var retryDueAt: Instant?

    /// An engine that has shown nothing yet.
    public init(configuration: PlaceholderConfiguration = PlaceholderConfiguration()) {
        self.configuration = configuration
        inputs.headerOnlySections = configuration.headerOnlySections
    }

    /// When the engine next needs ``advance(to:)``, if ever. Always later than
    /// the last input or advance: a driver that sleeps until it never spins.
    public var nextDeadline: Instant? {
        [
            networkLostAt.map { $0 + configuration.offlineGrace },
            loadingDecidedAt.map { $0 + configuration.loadingDelay },
            loadingShownAt.map { $0 + configuration.loadingMinimum },
            retryDueAt,
        ].compactMap { $0 }.min()
    }

    // MARK: Inputs

    /// The network changed. Going down relabels the screen only after the offline grace; coming
    /// back applies at once and, while a network failure is shown, asks for a retry. `portalURL`:
    /// behind a portal, where to sign in (reachd's `portal_url`).
    public mutating func networkChanged(
        _ condition: NetworkCondition, portalURL: String? = nil, at now: Instant
    ) -> [PlaceholderEvent] {
        let before = inputs.network
        let wasUsable = reportedNetwork.isUsable
        reportedNetwork = condition
        inputs.portalURL = condition == .portal ? portalURL : nil
        if before == .online && !condition.isUsable {
            // Online to offline: only after the grace period.
            if networkLostAt == nil { networkLostAt = now }
        } else {
            // Coming back, the first news, or one kind of down to another: at once.
            inputs.network = condition
            networkLostAt = nil
        }
        if !condition.isUsable, inputs.refreshInFlight != nil { networkDroppedDuringRefresh = condition }
        // A return as reported, not as graced: a drop shorter than the grace
        // still explains a failure shown meanwhile, and its end must retry it.
        if !wasUsable && condition.isUsable { scheduleRetryIfInvited(at: now) }
        return update(at: now)
    }

    /// A handover (`PathChange.isHandover`): the way out moved while the
    /// family stayed online, to a VPN or back, another uplink, another
    /// gateway or source address. A path coming or going is the network's
    /// return or loss, which ``networkChanged(_:portalURL:at:)`` handles. A list whose
    /// last load failed with a network-class failure asks for a retry, once
    /// per change and with the backoff a return uses: that failure may have
    /// been the old path's. Any other screen is left as it is.
    ///
    /// ```swift
    /// for try await status in monitor.statuses() {
    ///     _ = engine.networkChanged(NetworkCondition(status), portalURL: status.portalURL, at: .now)
    ///     if status.pathChanges.contains(where: \.isHandover) { _ = engine.pathChanged(at: .now) }
    /// }
    /// ```
    public mutating func pathChanged(at now: Instant) -> [PlaceholderEvent] {
        guard case .failed(let failure, _) = inputs.lastRefresh, failure.isNetworkClass, reportedNetwork.isUsable else {
            return []
        }
        scheduleRetryIfInvited(at: now)
        return update(at: now)
    }

    /// The list's rows changed outside a load (an edit, a deletion).
    public mutating func contentChanged(_ content: ListContent, at now: Instant) -> [PlaceholderEvent] {
        inputs.content = content
        return update(at: now)
    }

    /// A load began. Generations increase across all loads of the list.
    public mutating func loadStarted(_ kind: LoadKind, generation: Int, at now: Instant) -> [PlaceholderEvent] {
        newestGeneration = max(newestGeneration, generation)
        switch kind {
        case .initial, .refresh:
            // A completion older than the newest started refresh is stale,
            // and so is the page being appended to the list it replaces.
            staleBelow = max(staleBelow, generation)
            inputs.refreshInFlight = generation
            networkDroppedDuringRefresh = reportedNetwork.isUsable ? nil : reportedNetwork
            if appendInFlight != nil {
                appendInFlight = nil
                inputs.appendFooter = footerBeforeAppend
            }
        case .append:
            if appendInFlight == nil { footerBeforeAppend = inputs.appendFooter }
            appendInFlight = generation
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
        guard isCurrent(kind, generation) else { return [] }
        if let content { inputs.content = content }
        switch kind {
        case .initial, .refresh:
            if inputs.refreshInFlight == generation { inputs.refreshInFlight = nil }
            inputs.lastRefresh = .succeeded(fromCache: fromCache)
            // A new list: the old one's footer (failed, end reached) is gone.
            inputs.appendFooter = nil
            if !fromCache { retryAttempts = 0 }
        case .append:
            appendInFlight = nil
            inputs.appendFooter = reachedEnd ? .endReached : nil
        }
        return update(at: now)
    }

    /// A load failed. A failure the network explains (``LoadFailure/isNetworkClass``) while the
    /// network is or went down is `noNetwork` at once; a cancelled load changes nothing; a failed
    /// append only changes the footer.
    public mutating func loadFailed(
        _ kind: LoadKind, generation: Int, _ failure: LoadFailure, at now: Instant
    ) -> [PlaceholderEvent] {
        guard isCurrent(kind, generation) else { return [] }
        var networkWentAndCameBack = false
        switch kind {
        case .initial, .refresh:
            if inputs.refreshInFlight == generation { inputs.refreshInFlight = nil }
            // A cancelled load keeps whatever was there before it.
            guard failure != .cancelled else { break }
            let networkDown = reportedNetwork.isUsable ? networkDroppedDuringRefresh : reportedNetwork
            inputs.lastRefresh = .failed(failure, networkDown: networkDown)
            networkWentAndCameBack = failure.isNetworkClass && networkDown != nil && reportedNetwork.isUsable
        case .append:
            appendInFlight = nil
            inputs.appendFooter = failure == .cancelled ? footerBeforeAppend : .failed(failure)
        }
        var events = update(at: now)
        if networkWentAndCameBack {
            // Nothing else will announce the return that already happened.
            scheduleRetryIfInvited(at: now)
            events += update(at: now)
        }
        return events
    }

    /// A new query or filter: forget every result (the rows too), and ignore
    /// completions of loads started before now. What was shown disappears and
    /// the screen is blank until the next load decides (a spinner after the
    /// usual delay); a spinner already showing stays, for the load that follows.
    public mutating func reset(at now: Instant) -> [PlaceholderEvent] {
        staleBelow = newestGeneration == .max ? .max : newestGeneration + 1
        inputs.content = .empty
        inputs.refreshInFlight = nil
        inputs.lastRefresh = nil
        inputs.appendFooter = nil
        appendInFlight = nil
        footerBeforeAppend = nil
        networkDroppedDuringRefresh = nil
        retryDueAt = nil
        var events: [PlaceholderEvent] = []
        if let previous = shown, previous.kind != .loading {
            shown = nil
            events = [.willDisappear(previous), .didDisappear(previous)]
        }
        return events + update(at: now)
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

    /// Whether a completion belongs to a load the engine still waits for: not
    /// from before the newest refresh or reset, and for an append, the newest
    /// append (an older one was superseded).
    private func isCurrent(_ kind: LoadKind, _ generation: Int) -> Bool {
        guard generation >= staleBelow else { return false }
        switch kind {
        case .initial, .refresh: return true
        case .append: return appendInFlight == generation
        }
    }

    private var shownInvitesRetry: Bool {
        switch shown?.kind {
        case .noNetwork, .signInRequired, .noInternet: true
        case .failed(let failure): failure.isNetworkClass
        case .content, .loading, .noData, nil: false
        }
    }

    private mutating func scheduleRetryIfInvited(at now: Instant) {
        guard shownInvitesRetry else { return }
        retryDueAt = now + configuration.retryDelay(afterAttempts: retryAttempts)
    }

    private mutating func update(at now: Instant) -> [PlaceholderEvent] {
        if let lostAt = networkLostAt, now >= lostAt + configuration.offlineGrace {
            inputs.network = reportedNetwork
            networkLostAt = nil
        }
        var events = show(paced(PlaceholderRules.decide(inputs), at: now), at: now)
        if let shownAt = loadingShownAt, now >= shownAt + configuration.loadingMinimum {
            // The spinner's minimum is served: nothing more to hold back.
            loadingShownAt = nil
        }
        if let due = retryDueAt, now >= due {
            retryDueAt = nil
            if shownInvitesRetry && reportedNetwork.isUsable {
                retryAttempts += 1
                events.append(.retryRequested(attempt: retryAttempts))
            }
        }
        return events
    }

    /// Holds back a spinner for the loading delay, and keeps one that shows for
    /// the loading minimum: what is actually shown now (`nil`: nothing new).
    private mutating func paced(_ decided: PlaceholderState?, at now: Instant) -> PlaceholderState? {
        guard let decided else {
            loadingDecidedAt = nil
            return nil
        }
        let showingLoading = shown?.kind == .loading
        if decided.kind == .loading {
            if showingLoading { return decided }
            // The delay runs from the moment a load made the spinner due.
            let since = loadingDecidedAt ?? now
            loadingDecidedAt = since
            return now >= since + configuration.loadingDelay ? decided : nil
        }
        loadingDecidedAt = nil
        if showingLoading, let shownAt = loadingShownAt, now < shownAt + configuration.loadingMinimum {
            return nil
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
        guard let previous else { return [.willAppear(next), .didAppear(next)] }
        // Edge-triggered on the kind: the same kind with another decoration or
        // refreshing state is an update, not a redraw.
        guard previous.kind != next.kind else { return [.updated(next)] }
        return [.willDisappear(previous), .willAppear(next), .didDisappear(previous), .didAppear(next)]
    }
}
