import Reachability

/// What a placeholder says, for the app to render in its own toolkit.
public struct PlaceholderContent: Sendable, Hashable {
    /// The headline, short: "No network".
    public var title: String
    /// One or two sentences saying what happened and what to do.
    public var message: String
    /// A symbol name; apps map it to their own artwork.
    public var imageName: String
    /// The button under the message, if any.
    public var action: PlaceholderAction
    /// What a screen reader says for the whole placeholder.
    public var accessibilityLabel: String
    /// What ``action`` opens: for ``PlaceholderAction/openSignIn``, the
    /// portal's sign-in page when it is known.
    public var actionURL: String?

    /// A placeholder's words, image and action.
    public init(
        title: String, message: String, imageName: String, action: PlaceholderAction, accessibilityLabel: String,
        actionURL: String? = nil
    ) {
        self.title = title
        self.message = message
        self.imageName = imageName
        self.action = action
        self.accessibilityLabel = accessibilityLabel
        self.actionURL = actionURL
    }
}

/// The button a placeholder offers.
public enum PlaceholderAction: Sendable, Hashable {
    case retry
    case openSignIn
    case none
}

/// Plain English defaults for every placeholder, overridable per list and
/// passed through a localisation hook.
///
/// ```swift
/// var catalog = PlaceholderCatalog()
/// catalog.overrides[.noData] = PlaceholderContent(
///     title: "No messages", message: "New messages appear here.",
///     imageName: "tray", action: .none, accessibilityLabel: "No messages")
/// catalog.localize = { key, english in Bundle.main.localizedString(forKey: key, value: english, table: nil) }
/// let content = catalog.content(for: engine.shown?.kind ?? .loading)
/// ```
public struct PlaceholderCatalog: Sendable {
    /// Which placeholder an override or a localisation key is for.
    public enum Key: String, Sendable, Hashable, CaseIterable {
        case loading, noData, noNetwork, signInRequired, noInternet
        case failedUnreachable, failedServer, failedClient, failedDecoding, failedOther
    }

    /// Content that replaces the default for one placeholder of this list.
    public var overrides: [Key: PlaceholderContent] = [:]
    /// Maps a key such as `"noNetwork.title"` and its English text to the text
    /// to show. The default returns the English text.
    public var localize: @Sendable (_ key: String, _ english: String) -> String = { _, english in english }

    /// The plain English defaults, with no overrides and no localisation.
    public init() {}

    /// The content for what `state` shows, with the portal's sign-in page as
    /// the action's URL when known; `nil` for rows.
    ///
    /// ```swift
    /// if let content = catalog.content(for: state), content.action == .openSignIn, let page = content.actionURL {
    ///     print("sign in at", page)
    /// }
    /// ```
    public func content(for state: PlaceholderState) -> PlaceholderContent? {
        guard var content = content(for: state.kind) else { return nil }
        if state.kind == .signInRequired { content.actionURL = state.portalURL }
        return content
    }

    /// The content for `kind`, or `nil` for `.content` (the rows speak for themselves).
    public func content(for kind: PlaceholderKind) -> PlaceholderContent? {
        guard let key = Self.key(for: kind) else { return nil }
        if let override = overrides[key] { return override }
        let english = Self.english(key)
        let name = key.rawValue
        return PlaceholderContent(
            title: localize("\(name).title", english.title),
            message: localize("\(name).message", english.message),
            imageName: english.image,
            action: english.action,
            accessibilityLabel: localize("\(name).accessibility", english.title + ". " + english.message))
    }

    /// The catalog key for `kind`; `nil` for ``PlaceholderKind/content``, which shows rows.
    public static func key(for kind: PlaceholderKind) -> Key? {
        switch kind {
        case .content: nil
        case .loading: .loading
        case .noData: .noData
        case .noNetwork: .noNetwork
        case .signInRequired: .signInRequired
        case .noInternet: .noInternet
        case .failed(let failure):
            switch failure {
            case .offline, .unreachable: .failedUnreachable
            case .server: .failedServer
            case .client: .failedClient
            case .decoding: .failedDecoding
            case .cancelled: .failedOther
            }
        }
    }

    private static func english(_ key: Key) -> (title: String, message: String, image: String, action: PlaceholderAction) {
        switch key {
        case .loading: ("Loading", "Just a moment.", "hourglass", .none)
        case .noData: ("Nothing here yet", "There is nothing to show.", "tray", .none)
        case .noNetwork: ("No network", "Connect to the Internet and try again.", "wifi.slash", .retry)
        case .signInRequired: ("Sign in to the network", "This network needs you to sign in before it connects you to the Internet.", "person.badge.key", .openSignIn)
        case .noInternet: ("No Internet", "You're connected to a network, but it doesn't reach the Internet. Check the router, or try again later.", "wifi.exclamationmark", .retry)
        case .failedUnreachable: ("Can't reach the server", "The server did not answer. Try again in a moment.", "exclamationmark.icloud", .retry)
        case .failedServer: ("Something went wrong", "The server had a problem. Try again later.", "exclamationmark.triangle", .retry)
        case .failedClient: ("Couldn't load this", "The request was refused.", "exclamationmark.triangle", .none)
        case .failedDecoding: ("Couldn't read the answer", "The server sent something unexpected.", "exclamationmark.triangle", .retry)
        case .failedOther: ("Couldn't load this", "Try again.", "exclamationmark.triangle", .retry)
        }
    }
}
