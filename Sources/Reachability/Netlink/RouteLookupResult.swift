/// The kernel's answer to "where would a packet to this destination go?"
/// (RTM_GETROUTE), which applies policy rules, tables, route types and the most
/// specific match for us.
enum RouteLookupResult: Sendable, Hashable {
    /// The kernel chose a route; only a unicast one carries packets out.
    /// `table` is the routing table it came from (254 main, 255 local, a VPN's
    /// own); `source` the address the kernel would send from (RTA_PREFSRC);
    /// `lifetime` what the route has left when it expires (a router
    /// advertisement's, one added with `expires`), `nil` when it does not.
    /// Boxed: an answer is copied a dozen times a route change (the last
    /// answers, the batch, the checks of each), and a copy of these six
    /// fields went through their value witnesses; a box is one reference.
    indirect case route(
        type: RouteType, outputInterface: Int, gateway: IPAddress?, table: UInt32 = 254, source: IPAddress? = nil,
        lifetime: Duration? = nil)
    /// The kernel refused, and why.
    case failed(RouteLookupRefusal)

    /// How long the answer stands at most: the route's lifetime. The kernel
    /// stops using an expired route but says nothing until its garbage
    /// collection runs (up to `net.ipv6.route.gc_interval`, 30 s, later), so
    /// the lookup must be asked again then; `nil`: until a notification.
    var lifetime: Duration? {
        switch self {
        case .route(_, _, _, _, _, let lifetime): lifetime
        case .failed: nil
        }
    }

    /// When answers got at `now` must be asked for again: just after the
    /// first of their routes expires (the kernel counts in jiffies, and
    /// reports lifetimes in 10 ms ticks, rounded down), or a second later
    /// where one was lost (`nil`); `nil` when none expires and none was lost.
    static func askAgain(_ answers: some Sequence<RouteLookupResult?>, from now: ContinuousClock.Instant)
        -> ContinuousClock.Instant?
    {
        var due: ContinuousClock.Instant?
        for answer in answers {
            let next: ContinuousClock.Instant? =
                if let answer { answer.lifetime.map { now + $0 + .milliseconds(20) } } else { now + askAgainAfterFailure }
            if let next, due.map({ next < $0 }) ?? true { due = next }
        }
        return due
    }

    /// How long a lookup that failed, or whose answer was lost, waits before
    /// it is asked again: never at once, so that one that keeps failing
    /// cannot spin the loop.
    static let askAgainAfterFailure = Duration.seconds(1)

    /// This answer, standing for `lifetime` at most (what the route the table
    /// holds has left).
    func expiring(after lifetime: Duration) -> RouteLookupResult {
        switch self {
        case .route(let type, let outputInterface, let gateway, let table, let source, _):
            .route(
                type: type, outputInterface: outputInterface, gateway: gateway, table: table, source: source,
                lifetime: lifetime)
        case .failed:
            self
        }
    }
}
