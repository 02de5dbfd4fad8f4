/// The kernel's answer to "where would a packet to this destination go?"
/// (RTM_GETROUTE), which applies policy rules, tables, route types and the most
/// specific match for us.
enum RouteLookupResult: Sendable, Hashable {
    /// The kernel chose a route; only a unicast one carries packets out.
    case route(type: RouteType, outputInterface: Int, gateway: IPAddress?)
    /// The kernel refused with this errno: ENETUNREACH (no route), EHOSTUNREACH
    /// (unreachable route), EINVAL (blackhole), EACCES (prohibit).
    case failed(errno: Int32)
}
