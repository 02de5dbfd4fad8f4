import Reachability

/// Everything the decision depends on, at one instant: pure data.
struct PlaceholderInputs: Sendable, Hashable {
    /// The network after the offline grace period (see ``PlaceholderEngine``).
    var network: NetworkCondition = .unknown
    var content: ListContent = .empty
    var headerOnlySections: HeaderOnlySectionPolicy = .empty
    /// The generation of the refresh (or initial load) under way.
    var refreshInFlight: Int?
    /// How the last refresh since the last reset ended; `nil`: never loaded.
    var lastRefresh: RefreshOutcome?
    var appendFooter: AppendFooter?
    var forced: PlaceholderKind?
    /// The portal's sign-in page, while the network is a portal.
    var portalURL: String?
    var suppressed = false
}

enum RefreshOutcome: Sendable, Hashable {
    case succeeded(fromCache: Bool)
    /// `networkDown`: the network was reported offline (or behind a portal)
    /// when the load failed, or went down while it ran. The offline grace is
    /// there to avoid flicker, not to mislabel: such a failure is the
    /// network's, at once.
    case failed(LoadFailure, networkDown: NetworkCondition?)
}

/// The placeholder rules, first match wins. Pure: no time, no I/O.
enum PlaceholderRules {
    /// What to show, or `nil` when nothing is known that is worth showing: the
    /// list never loaded, no load is under way and the network is usable. The
    /// screen then stays as it is (blank at first): a spinner with no load
    /// behind it would be a lie, "no data" a guess.
    static func decide(_ inputs: PlaceholderInputs) -> PlaceholderState? {
        // 1. The app overrides.
        if let forced = inputs.forced { return PlaceholderState(kind: forced) }
        if inputs.suppressed { return PlaceholderState(kind: .content) }

        // 2. Rows beat everything: going offline never hides what was loaded.
        let refreshing = inputs.refreshInFlight != nil
        if inputs.content.hasContent(headerOnlySections: inputs.headerOnlySections) {
            var refreshFailure: LoadFailure?
            if case .failed(let failure, _) = inputs.lastRefresh { refreshFailure = failure }
            let decoration = ContentDecoration(
                offlineBanner: inputs.network.explains != nil,
                refreshFailed: refreshFailure,
                appendFooter: inputs.appendFooter)
            return PlaceholderState(kind: .content, decoration: decoration, isRefreshing: refreshing)
        }

        guard let last = inputs.lastRefresh else {
            // 3. The first load is under way: loading, never "empty".
            if refreshing { return PlaceholderState(kind: .loading) }
            // 5. Nothing loaded, nothing under way: a network that does not
            // reach the Internet says why nothing will load; otherwise there is
            // nothing to say yet.
            return inputs.network.explains.map { PlaceholderState(kind: $0, portalURL: inputs.portalURL) }
        }
        // 4. A refresh after an earlier result keeps showing that result.
        // 6-8. The last result decides.
        let kind = kind(after: last, network: inputs.network)
        return PlaceholderState(
            kind: kind, isRefreshing: refreshing, portalURL: kind == .signInRequired ? inputs.portalURL : nil)
    }

    private static func kind(after outcome: RefreshOutcome, network: NetworkCondition) -> PlaceholderKind {
        switch outcome {
        case .failed(let failure, let networkDown):
            // Behind a portal whatever answered was most likely the portal
            // (its sign-in page does not decode as the list): sign in first.
            if network == .portal || networkDown == .portal { return .signInRequired }
            if failure.isNetworkClass {
                // 6. The network explains the failure: as it is now, or as it
                // was when the load failed.
                if let explained = network.explains ?? networkDown?.explains { return explained }
                if failure == .offline { return .noNetwork }
            }
            // 7. Anything else is the server's or the app's.
            return .failed(failure)
        case .succeeded(let fromCache):
            // 8. An empty list from a cache while offline says nothing about the data.
            return fromCache ? network.explains ?? .noData : .noData
        }
    }
}

extension NetworkCondition {
    /// The placeholder this network explains an empty or failed list with, if
    /// any: offline is "no network", a portal "sign in", limited "no Internet".
    var explains: PlaceholderKind? {
        switch self {
        case .offline: .noNetwork
        case .portal: .signInRequired
        case .limited: .noInternet
        case .unknown, .online: nil
        }
    }
}
