/// What a connectivity check (an HTTP probe to a known endpoint) found, in
/// NetworkManager's terms.
///
/// reachd v1 reports `.unknown` until a check is configured; the other cases
/// are part of the protocol so that clients can already handle them.
public enum Connectivity: ProtocolValue {
    /// No check has run.
    case unknown
    /// The check could not get out at all.
    case none
    /// A captive portal answered instead of the endpoint: the user must sign in.
    case portal
    /// The check reached something but not the endpoint.
    case limited
    /// The endpoint answered as expected.
    case full
    /// A verdict this version does not know, from a newer daemon. It is not
    /// `full`: a status with it is not ``NetworkStatus/online``.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [Connectivity] = [.unknown, .none, .portal, .limited, .full]

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .unknown: "unknown"
        case .none: "none"
        case .portal: "portal"
        case .limited: "limited"
        case .full: "full"
        case .unrecognized(let rawValue): rawValue
        }
    }

    /// Whether this version does not know the value: a newer daemon's. A
    /// match, not a search of ``allCases``: read for every status written.
    package var isUnrecognized: Bool {
        switch self {
        case .unknown, .none, .portal, .limited, .full: false
        case .unrecognized: true
        }
    }
}
