/// One question for the kernel's route lookup (RTM_GETROUTE): where would a
/// packet to `destination` go, sent by `uid` over TCP to `port`? The uid and
/// the port make policy rules that select on them (`uidrange`, `ipproto`,
/// `dport`) apply as they would to the app's own packets.
struct RouteQuery: Sendable, Hashable {
    var destination: IPAddress
    /// Whose packets: RTA_UID. `nil`: the caller's own, as the kernel assumes.
    var uid: UInt32?
    /// The destination port, for TCP (RTA_IP_PROTO, RTA_DPORT); `nil` asks
    /// without a protocol, as the host's "is the Internet there" lookups do.
    var tcpPort: UInt16?
    /// The address the packet is sent from (RTA_SRC), for rules that
    /// select on it (`from`); `nil`: as a new socket's, chosen by the route.
    var source: IPAddress?
    /// The link it must leave by (RTA_OIF), as a socket bound to it or an
    /// IPv6 link-local address's scope makes it; `nil`: any. 0, or an
    /// index no link has, is asked as a link the kernel refuses (ENODEV):
    /// the kernel reads 0 as "any", and a server scoped to a link that is
    /// not there is unreachable, not reachable by any other.
    var outputInterface: Int?

    init(
        _ destination: IPAddress, uid: UInt32? = nil, tcpPort: UInt16? = nil, source: IPAddress? = nil,
        outputInterface: Int? = nil
    ) {
        self.destination = destination
        self.uid = uid
        self.tcpPort = tcpPort
        self.source = source
        self.outputInterface = outputInterface
    }
}
