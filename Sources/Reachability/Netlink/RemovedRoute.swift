/// What an RTM_DELROUTE says of the route it removes: its prefix, and what
/// a lookup that route answered would name. The kernel sends it for an IPv4
/// route before it unlinks the route (`fib_table_delete`), so a lookup asked
/// at once may still be answered by it (`bench/removal.py`).
package struct RemovedRoute: Sendable, Hashable {
    var prefix: RoutePrefix
    /// Its one next hop; `nil` where it has several (RTA_MULTIPATH), names
    /// its gateway in another family (RTA_VIA), or carries no packets out
    /// (a blackhole, unreachable or prohibit route, whose lookup the kernel
    /// refuses): then any answer under it may be its.
    package var nextHop: NextHop?

    package struct NextHop: Sendable, Hashable {
        package var outputInterface: Int
        package var gateway: IPAddress?
    }

    /// Whether the kernel's `answer` for `destination` may be this route's.
    func mayHaveAnswered(_ destination: IPAddress, with answer: RouteLookupResult?) -> Bool {
        guard prefix.contains(destination) else { return false }
        guard let nextHop else { return true }
        guard case .route(_, let outputInterface, let gateway, _, _, _)? = answer else { return false }
        return outputInterface == nextHop.outputInterface && gateway == nextHop.gateway
    }
}
