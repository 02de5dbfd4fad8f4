import Reachability

/// What a placeholder says, for the app to render in its own toolkit.
public struct PlaceholderContent: Sendable, Hashable {
    /// The headline, short: "No network".
    public var title: String
    /// One or two sentences saying what happened and what to do.
    public var message: String
    /// A freedesktop icon name, symbolic: `network-offline-symbolic`. Every
    /// default is in the Adwaita icon theme, which GTK apps on any desktop
    /// have; `GtkImage`, `AdwStatusPage` and `QIcon::fromTheme` take it as it is.
    public var iconName: String
    /// The button under the message, if any.
    public var action: PlaceholderAction
    /// What a screen reader says for the whole placeholder.
    public var accessibilityLabel: String
    /// What ``action`` opens: for ``PlaceholderAction/openSignIn``, the
    /// portal's sign-in page when it is known.
    public var actionURL: String?

    /// A placeholder's words, icon and action.
    public init(
        title: String, message: String, iconName: String, action: PlaceholderAction, accessibilityLabel: String,
        actionURL: String? = nil
    ) {
        self.title = title
        self.message = message
        self.iconName = iconName
        self.action = action
        self.accessibilityLabel = accessibilityLabel
        self.actionURL = actionURL
    }

    /// SF Symbols names, which no Linux icon theme has, gave way to freedesktop icon names.
    @available(*, unavailable, renamed: "iconName")
    public var imageName: String { iconName }

    /// SF Symbols names, which no Linux icon theme has, gave way to freedesktop icon names.
    @available(*, unavailable, renamed: "init(title:message:iconName:action:accessibilityLabel:actionURL:)")
    public init(
        title: String, message: String, imageName: String, action: PlaceholderAction, accessibilityLabel: String,
        actionURL: String? = nil
    ) {
        self.init(
            title: title, message: message, iconName: imageName, action: action,
            accessibilityLabel: accessibilityLabel, actionURL: actionURL)
    }
}

/// The button a placeholder offers.
public enum PlaceholderAction: Sendable, Hashable {
    case retry
    case openSignIn
    case none
}

/// Plain English defaults for every placeholder, with freedesktop icon
/// names, overridable per list and passed through a localisation hook.
///
/// ```swift
/// var catalog = PlaceholderCatalog()
/// catalog.overrides[.noData] = PlaceholderContent(
///     title: "No messages", message: "New messages appear here.",
///     iconName: "mail-unread-symbolic", action: .none, accessibilityLabel: "No messages")
/// catalog.iconNames[.noNetwork] = "network-wireless-offline-symbolic"
/// catalog.localize = { key, english in Bundle.main.localizedString(forKey: key, value: english, table: nil) }
/// let content = catalog.content(for: engine.shown?.kind ?? .loading)
/// ```
public struct PlaceholderCatalog: Sendable {
    /// Which placeholder an override or a localisation key is for.
    public enum Key: String, Sendable, Hashable, CaseIterable {
        case loading, noData, noNetwork, signInRequired, noInternet
        case failedUnreachable, failedNameLookup, failedServer, failedClient, failedDecoding, failedOther
    }

    /// Content that replaces the default for one placeholder of this list.
    public var overrides: [Key: PlaceholderContent] = [:]
    /// Icons that replace the default for one placeholder, keeping its words.
    public var iconNames: [Key: String] = [:]
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
            iconName: iconNames[key] ?? english.icon,
            action: english.action,
            accessibilityLabel: localize("\(name).accessibility", english.title + ". " + english.message))
    }

    /// The banner over the rows `state` shows, or `nil` when rows show
    /// without one (or a placeholder shows). The network's banner comes
    /// first: a refresh that failed while offline failed because of it.
    /// Localisation keys: `offlineBanner.message`, `refreshFailedBanner.message`
    /// (the failure placeholder's message follows it).
    ///
    /// ```swift
    /// if let banner = catalog.banner(for: state) {
    ///     print(banner.message, banner.action == .retry ? "[Retry]" : "")
    /// }
    /// ```
    public func banner(for state: PlaceholderState) -> PlaceholderBanner? {
        guard state.kind == .content else { return nil }
        if state.decoration.offlineBanner {
            return PlaceholderBanner(
                message: localize("offlineBanner.message", "You're offline. This is the list as it last loaded."),
                action: .retry)
        }
        guard let failure = state.decoration.refreshFailed else { return nil }
        let reason = content(for: .failed(failure))?.message ?? ""
        return PlaceholderBanner(
            message: localize("refreshFailedBanner.message", "Couldn't refresh.") + (reason.isEmpty ? "" : " " + reason),
            action: .retry)
    }

    /// The words on the button of `action`: "Retry", "Sign In" (header
    /// capitalisation, as the GNOME HIG asks of buttons); `nil` for
    /// ``PlaceholderAction/none``. Localisation keys: `action.retry`,
    /// `action.openSignIn`.
    ///
    /// ```swift
    /// if let content = catalog.content(for: state), let button = catalog.title(for: content.action) {
    ///     print("[\(button)]")
    /// }
    /// ```
    public func title(for action: PlaceholderAction) -> String? {
        switch action {
        case .retry: localize("action.retry", "Retry")
        case .openSignIn: localize("action.openSignIn", "Sign In")
        case .none: nil
        }
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
            // The host is online (offline shows no network), so the name
            // alone failed: the user's DNS, not the server.
            case .unreachable(.dns): .failedNameLookup
            case .offline, .unreachable: .failedUnreachable
            case .server: .failedServer
            case .client: .failedClient
            case .decoding: .failedDecoding
            case .cancelled: .failedOther
            }
        }
    }

    /// The icons are the Adwaita theme's symbolic ones (adwaita-icon-theme
    /// 43, Debian 12), so that a GTK app finds each on any desktop.
    private static func english(_ key: Key) -> (title: String, message: String, icon: String, action: PlaceholderAction) {
        switch key {
        case .loading: ("Loading", "Just a moment.", "content-loading-symbolic", .none)
        case .noData: ("Nothing here yet", "There is nothing to show.", "view-list-symbolic", .none)
        case .noNetwork: ("No network", "Connect to the Internet and try again.", "network-offline-symbolic", .retry)
        case .signInRequired: ("Sign in to the network", "This network needs you to sign in before it connects you to the Internet.", "web-browser-symbolic", .openSignIn)
        case .noInternet: ("No Internet", "You're connected to a network, but it doesn't reach the Internet. Check the router, or try again later.", "network-no-route-symbolic", .retry)
        case .failedUnreachable: ("Can't reach the server", "The server did not answer. Try again in a moment.", "network-error-symbolic", .retry)
        case .failedNameLookup: ("Can't look up addresses", "The network is connected, but the server's name could not be looked up. Check the DNS settings, or try again.", "network-error-symbolic", .retry)
        case .failedServer: ("Something went wrong", "The server had a problem. Try again later.", "dialog-error-symbolic", .retry)
        case .failedClient: ("Couldn't load this", "The request was refused.", "dialog-warning-symbolic", .none)
        case .failedDecoding: ("Couldn't read the answer", "The server sent something unexpected.", "dialog-warning-symbolic", .retry)
        case .failedOther: ("Couldn't load this", "Try again.", "dialog-error-symbolic", .retry)
        }
    }
}
