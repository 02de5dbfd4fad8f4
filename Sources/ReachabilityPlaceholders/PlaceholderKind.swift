import Reachability

/// What a list screen shows.
public enum PlaceholderKind: Sendable, Hashable {
    /// The rows (possibly with a banner or footer, see ``ContentDecoration``).
    case content
    /// A spinner: the first load is under way.
    case loading
    /// The list loaded and is empty.
    case noData
    /// The list cannot load because the host is offline.
    case noNetwork
    /// A captive portal stands between the host and the Internet; the state's
    /// ``PlaceholderState/portalURL`` says where to sign in, when known.
    case signInRequired
    /// Connected to a network that does not reach the Internet.
    case noInternet
    /// The last load failed for this reason.
    case failed(LoadFailure)
}

/// Why a load failed, as the app's networking layer classifies it.
///
/// ```swift
/// do {
///     _ = try await URLSession.shared.data(from: url)
/// } catch let error as URLError where error.code == .timedOut {
///     _ = engine.loadFailed(.refresh, generation: 3, .unreachable(.timeout), at: .now)
/// }
/// ```
public enum LoadFailure: Sendable, Hashable {
    /// The request never left: no network (URLError.notConnectedToInternet).
    case offline
    /// The server could not be reached.
    case unreachable(Cause)
    /// The server answered 5xx.
    case server(status: Int)
    /// The server answered 4xx.
    case client(status: Int)
    /// The answer did not decode.
    case decoding
    /// The app cancelled the load; it changes nothing on screen.
    case cancelled

    /// Failures the network can explain: a retry may succeed once it is back.
    public var isNetworkClass: Bool {
        switch self {
        case .offline, .unreachable: true
        case .server, .client, .decoding, .cancelled: false
        }
    }

    /// How the app's networking layer failed to reach its server: what the
    /// request met, not the routing (`DestinationReason` says that).
    public enum Cause: Sendable, Hashable, CaseIterable {
        case timeout, dns, refused, tls
    }
}

/// Which load of a list: the first, a pull-to-refresh, or the next page.
public enum LoadKind: Sendable, Hashable, CaseIterable {
    case initial, refresh, append
}

extension PlaceholderKind: CaseIterable {
    /// Every kind, with one of each failure (and one status code each for
    /// server and client errors): what to walk through to check that a catalog,
    /// a screenshot test or a localisation covers everything.
    ///
    /// ```swift
    /// for kind in PlaceholderKind.allCases {
    ///     print(kind, catalog.content(for: kind)?.title ?? "(the rows)")
    /// }
    /// ```
    public static var allCases: [PlaceholderKind] {
        [.content, .loading, .noData, .noNetwork, .signInRequired, .noInternet]
            + LoadFailure.allCases.map { .failed($0) }
    }
}

extension LoadFailure: CaseIterable {
    /// One of each failure: every unreachable cause, server 500, client 404.
    public static var allCases: [LoadFailure] {
        [.offline] + Cause.allCases.map { .unreachable($0) }
            + [.server(status: 500), .client(status: 404), .decoding, .cancelled]
    }
}

extension PlaceholderKind: CustomStringConvertible {
    /// `noData`, `failed(server(status: 500))`: no module or type names, so it
    /// can appear in logs and test output as it is.
    public var description: String {
        switch self {
        case .content: "content"
        case .loading: "loading"
        case .noData: "noData"
        case .noNetwork: "noNetwork"
        case .signInRequired: "signInRequired"
        case .noInternet: "noInternet"
        case .failed(let failure): "failed(\(failure))"
        }
    }
}

extension LoadFailure: CustomStringConvertible {
    /// `unreachable(refused)`, `server(status: 500)`: no module or type names.
    public var description: String {
        switch self {
        case .offline: "offline"
        case .unreachable(let cause): "unreachable(\(cause))"
        case .server(let status): "server(status: \(status))"
        case .client(let status): "client(status: \(status))"
        case .decoding: "decoding"
        case .cancelled: "cancelled"
        }
    }
}
