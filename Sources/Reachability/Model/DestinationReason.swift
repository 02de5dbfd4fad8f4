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
    public static let allCases: [DestinationReason] =
        UnreachableReason.allCases.map(DestinationReason.init) + [.nxdomain, .noAddress, .resolverFailed, .timeout]

    /// The route reason of the same name.
    public init(_ reason: UnreachableReason) {
        switch reason {
        case .noRoute: self = .noRoute
        case .unreachableRoute: self = .unreachableRoute
        case .blackholeRoute: self = .blackholeRoute
        case .prohibitedRoute: self = .prohibitedRoute
        case .unusableRoute: self = .unusableRoute
        case .linkDown: self = .linkDown
        case .noCarrier: self = .noCarrier
        case .loopbackRoute: self = .loopbackRoute
        case .noUsableAddress: self = .noUsableAddress
        case .unrecognized(let rawValue): self.init(rawValue: rawValue)
        }
    }

    /// The route reason of the same name, for the reasons a route lookup
    /// gives; `nil` for the resolver's. Both share one spelling on the wire.
    public var routeReason: UnreachableReason? {
        switch self {
        case .noRoute: .noRoute
        case .unreachableRoute: .unreachableRoute
        case .blackholeRoute: .blackholeRoute
        case .prohibitedRoute: .prohibitedRoute
        case .unusableRoute: .unusableRoute
        case .linkDown: .linkDown
        case .noCarrier: .noCarrier
        case .loopbackRoute: .loopbackRoute
        case .noUsableAddress: .noUsableAddress
        case .nxdomain, .noAddress, .resolverFailed, .timeout, .unrecognized: nil
        }
    }

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .nxdomain: return "nxdomain"
        case .noAddress: return "no_address"
        case .resolverFailed: return "resolver_failed"
        case .timeout: return "timeout"
        case .unrecognized(let rawValue): return rawValue
        case .noRoute, .unreachableRoute, .blackholeRoute, .prohibitedRoute, .unusableRoute, .linkDown, .noCarrier,
             .loopbackRoute, .noUsableAddress:
            return routeReason!.rawValue
        }
    }

    public var description: String {
        switch self {
        case .nxdomain: return "no such name"
        case .noAddress: return "the name has no address"
        case .resolverFailed: return "the resolver failed"
        case .timeout: return "the resolver timed out"
        case .unrecognized(let rawValue): return rawValue.escapingControlCharacters
        case .noRoute, .unreachableRoute, .blackholeRoute, .prohibitedRoute, .unusableRoute, .linkDown, .noCarrier,
             .loopbackRoute, .noUsableAddress:
            return routeReason!.description
        }
    }
}
