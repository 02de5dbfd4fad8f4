/// How far the host can reach, for one address family or overall.
///
/// The cases are ordered: `offline < local < online`, so the overall answer is
/// the `max` of the two families (``NetworkStatus/reachability``). A level
/// from a newer daemon that this version does not know is not online, and
/// ranks below `offline`, so that the better of two families is a known one
/// whenever either is.
///
/// ```swift
/// let overall = max(status.ipv4.reachability, status.ipv6.reachability)
/// if overall == .local { print("link up, but no route out") }
/// ```
public enum ReachabilityLevel: ProtocolValue, Comparable {
    /// No usable link with an address of this family.
    case offline
    /// A link is up with carrier and has an address, but the kernel has no usable route out.
    case local
    /// The kernel would send a packet to a global destination out of a link with carrier,
    /// and the host has a usable address wider than link scope.
    case online
    /// A level this version does not know, from a newer daemon: not online.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [ReachabilityLevel] = [.offline, .local, .online]

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .offline: "offline"
        case .local: "local"
        case .online: "online"
        case .unrecognized(let rawValue): rawValue
        }
    }

    /// Whether this version does not know the value: a newer daemon's. A
    /// match, not a search of ``allCases``: read for every status written.
    package var isUnrecognized: Bool {
        switch self {
        case .offline, .local, .online: false
        case .unrecognized: true
        }
    }

    private var rank: Int {
        switch self {
        case .unrecognized: -1
        case .offline: 0
        case .local: 1
        case .online: 2
        }
    }

    public static func < (lhs: ReachabilityLevel, rhs: ReachabilityLevel) -> Bool {
        // Two levels this version does not know: by spelling, so that exactly
        // one of <, == and > holds, as Comparable asks.
        if case .unrecognized(let left) = lhs, case .unrecognized(let right) = rhs { return left < right }
        return lhs.rank < rhs.rank
    }
}
