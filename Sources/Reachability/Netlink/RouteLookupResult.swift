/// The kernel's answer to "where would a packet to this destination go?"
/// (RTM_GETROUTE), which applies policy rules, tables, route types and the most
/// specific match for us.
enum RouteLookupResult: Sendable, Hashable {
    /// The kernel chose a route; only a unicast one carries packets out.
    /// `table` is the routing table it came from (254 main, 255 local, a VPN's
    /// own); `source` the address the kernel would send from (RTA_PREFSRC).
    case route(type: RouteType, outputInterface: Int, gateway: IPAddress?, table: UInt32 = 254, source: IPAddress? = nil)
    /// The kernel refused with this errno: ENETUNREACH (no route), EHOSTUNREACH
    /// (unreachable route), EINVAL (blackhole), EACCES (prohibit).
    case failed(errno: Int32)
}
