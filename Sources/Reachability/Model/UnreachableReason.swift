/// Why an address family is not online. The raw values are the wire spelling.
public enum UnreachableReason: String, Codable, Sendable, CaseIterable, CustomStringConvertible {
    /// The kernel's route lookup found no route (ENETUNREACH).
    case noRoute = "no_route"
    /// The route the kernel found is of type `unreachable` (EHOSTUNREACH).
    case unreachableRoute = "unreachable_route"
    /// The route the kernel found is of type `blackhole` (EINVAL).
    case blackholeRoute = "blackhole_route"
    /// The route the kernel found is of type `prohibit` (EACCES).
    case prohibitedRoute = "prohibited_route"
    /// The route found is not unicast (local, broadcast, throw, ...), or the lookup failed otherwise.
    case unusableRoute = "unusable_route"
    /// The route's egress link is administratively down.
    case linkDown = "link_down"
    /// The route's egress link has no carrier (the kernel keeps such routes, flagged `linkdown`).
    case noCarrier = "no_carrier"
    /// The route leaves through the loopback interface, which never counts.
    case loopbackRoute = "loopback_route"
    /// There is a route, but no usable address of the family wider than link scope
    /// (none at all, or only tentative or DAD-failed ones).
    case noUsableAddress = "no_usable_address"

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
        }
    }
}
