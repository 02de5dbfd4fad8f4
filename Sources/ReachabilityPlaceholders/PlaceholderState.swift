import Reachability

/// What the engine decided to show.
public struct PlaceholderState: Sendable, Hashable {
    /// The placeholder, or ``PlaceholderKind/content`` for the rows.
    public var kind: PlaceholderKind
    /// Only for ``PlaceholderKind/content``.
    public var decoration: ContentDecoration
    /// A refresh is under way behind what is shown (pull-to-refresh spinner).
    public var isRefreshing: Bool
    /// Where to sign in, for ``PlaceholderKind/signInRequired``, when the
    /// portal said (reachd's `portal_url`).
    public var portalURL: String?

    /// A state of `kind`, with `decoration` around rows and a refresh under way or not.
    public init(
        kind: PlaceholderKind, decoration: ContentDecoration = .none, isRefreshing: Bool = false, portalURL: String? = nil
    ) {
        self.kind = kind
        self.decoration = decoration
        self.isRefreshing = isRefreshing
        self.portalURL = portalURL
    }
}

/// What goes around rows that are shown: failures never replace content.
public struct ContentDecoration: Sendable, Hashable {
    /// The network does not reach the Internet (offline, a portal, limited);
    /// the rows are what was loaded before.
    public var offlineBanner: Bool
    /// The last refresh failed; the rows are from before it.
    public var refreshFailed: LoadFailure?
    /// The state of loading the next page.
    public var appendFooter: AppendFooter?

    /// The decoration with these parts; by default none.
    public init(offlineBanner: Bool = false, refreshFailed: LoadFailure? = nil, appendFooter: AppendFooter? = nil) {
        self.offlineBanner = offlineBanner
        self.refreshFailed = refreshFailed
        self.appendFooter = appendFooter
    }

    /// No banner, no footer.
    public static let none = ContentDecoration()
}

/// The footer below the rows while paging.
public enum AppendFooter: Sendable, Hashable {
    case loading
    case failed(LoadFailure)
    case endReached
}
