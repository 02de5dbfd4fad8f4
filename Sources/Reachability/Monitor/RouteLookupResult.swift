/// The kernel's answer to "where would a packet to this destination go?"
/// (RTM_GETROUTE), which applies policy rules, tables, route types and the most
/// specific match for us.
enum RouteLookupResult: Sendable, Hashable {
    /// The kernel chose a route. `type` is RTN_* (1 is unicast).
    case route(type: UInt8, outputInterface: Int, gateway: IPAddress?)
    /// The kernel refused with this errno: ENETUNREACH (no route), EHOSTUNREACH
    /// (unreachable route), EINVAL (blackhole), EACCES (prohibit).
    case failed(errno: Int32)

    static let unicast: UInt8 = 1
}
