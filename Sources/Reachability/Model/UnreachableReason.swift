/// Why an address family is not online. The raw values are the wire spelling.
public enum UnreachableReason: ProtocolValue, CustomStringConvertible {
    /// The kernel's route lookup found no route (ENETUNREACH).
    case noRoute
    /// The route the kernel found is of type `unreachable` (EHOSTUNREACH).
    case unreachableRoute
    /// The route the kernel found is of type `blackhole` (EINVAL).
    case blackholeRoute
    /// The route the kernel found is of type `prohibit` (EACCES).
    case prohibitedRoute
    /// The route found is not unicast (local, broadcast, throw, ...), or the lookup failed otherwise.
    case unusableRoute
    /// The route's egress link is administratively down.
    case linkDown
    /// The route's egress link has no carrier (the kernel keeps such routes, flagged `linkdown`).
    case noCarrier
    /// The route leaves through the loopback interface, which never counts.
    case loopbackRoute
    /// There is a route, but no usable address of the family wider than link scope
    /// (none at all, or only tentative or DAD-failed ones).
    case noUsableAddress
    /// A reason this version does not know, from a newer daemon.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [UnreachableReason] = [
        .noRoute, .unreachableRoute, .blackholeRoute, .prohibitedRoute, .unusableRoute, .linkDown, .noCarrier,
        .loopbackRoute, .noUsableAddress,
    ]

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
        case .noUsableAddress: "no usable address"
        case .unrecognized(let rawValue): rawValue
        }
    }
}
