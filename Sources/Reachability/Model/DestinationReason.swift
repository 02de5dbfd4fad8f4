/// Why a destination, or one of its addresses, is not reachable: a route
/// reason (the families' reasons) or a resolution failure. The raw values are
/// the wire spelling.
///
/// ```swift
/// let answer = try await ReachabilityMonitor.reachability(of: try Destination(parsing: "api.example.com"))
/// if answer.reason == .nxdomain { print("check the server's name") }
/// ```
public enum DestinationReason: ProtocolValue, CustomStringConvertible {
    /// The kernel's route lookup found no route (ENETUNREACH).
    case noRoute
    /// The route found is of type `unreachable`.
    case unreachableRoute
    /// The route found is of type `blackhole`.
    case blackholeRoute
    /// The route found is of type `prohibit`.
    case prohibitedRoute
    /// The route found is not unicast (broadcast, throw, ...), or the lookup failed otherwise.
    case unusableRoute
    /// The route's egress link is administratively down.
    case linkDown
    /// The route's egress link has no carrier.
    case noCarrier
    /// The route leaves through loopback for an address that is not this host's.
    case loopbackRoute
    /// There is a route, but no source address that reaches as far as the
    /// destination (only link-local or tentative ones, `::1`, or no IPv4
    /// address on the egress link of an IPv4 route).
    case noUsableAddress
    /// The name does not exist (EAI_NONAME).
    case nxdomain
    /// The name exists but has no address (of the family asked for).
    case noAddress
    /// The resolver failed: no name server answered, or it answered with an error.
    case resolverFailed
    /// The resolver took longer than the daemon waits; it keeps trying, and
    /// a late answer is published.
    case timeout
    /// A reason this version does not know, from a newer daemon.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [DestinationReason] = [
        .noRoute, .unreachableRoute, .blackholeRoute, .prohibitedRoute, .unusableRoute, .linkDown, .noCarrier,
        .loopbackRoute, .noUsableAddress, .nxdomain, .noAddress, .resolverFailed, .timeout,
    ]

    /// The route reason of the same name.
    public init(_ reason: UnreachableReason) {
        self.init(rawValue: reason.rawValue)
    }

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .noRoute: "no_route"
        case .unreachableRoute: "unreachable_route"
        case .blackholeRoute: "blackhole_route"
        case .prohibitedRoute: "prohibited_route"
        case .unusableRoute: "unusable_route"
        case .linkDown: "link_down"
        case .noCarrier: "no_carrier"
        case .loopbackRoute: "loopback_route"
        case .noUsableAddress: "no_usable_address"
        case .nxdomain: "nxdomain"
        case .noAddress: "no_address"
        case .resolverFailed: "resolver_failed"
        case .timeout: "timeout"
        case .unrecognized(let rawValue): rawValue
        }
    }

    public var description: String {
        switch self {
        case .noRoute: "no route"
        case .unreachableRoute: "unreachable route"
        case .blackholeRoute: "blackhole route"
        case .prohibitedRoute: "prohibit route"
        case .unusableRoute: "no unicast route"
        case .linkDown: "egress link down"
        case .noCarrier: "egress link has no carrier"
        case .loopbackRoute: "route through loopback"
        case .noUsableAddress: "no usable source address"
        case .nxdomain: "no such name"
        case .noAddress: "the name has no address"
        case .resolverFailed: "the resolver failed"
        case .timeout: "the resolver timed out"
        case .unrecognized(let rawValue): rawValue.escapingControlCharacters
        }
    }
}
