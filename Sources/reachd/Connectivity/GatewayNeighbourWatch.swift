import Reachability

/// The published paths' gateways as the kernel's neighbour table sees them:
/// a gateway whose entry turns `FAILED` stopped answering address
/// resolution (a dead upstream box, a switch in between), though its link
/// keeps its carrier and its routes; one that turns `REACHABLE` again came
/// back. What no route event says, told as the kernel finds it, with no
/// packet of ours and no timer.
///
/// Only those two transitions reach the daemon (``NeighbourEventSocket``
/// filters in the kernel), and `REACHABLE` only while a gateway found dead
/// has not been probed since, when its return is news.
final class GatewayNeighbourWatch {
    private let socket: NeighbourEventSocket
    /// Each online family's path that has a gateway.
    private var gateways: [AddressFamily: PathEgress] = [:]

    init() throws(NetlinkError) {
        socket = try NeighbourEventSocket()
    }

    var fileDescriptor: Int32 { socket.fileDescriptor }

    /// A published status: the gateways to watch.
    func follow(_ status: NetworkStatus) {
        gateways = Self.gateways(of: status)
    }

    /// Whether a gateway's return is news (one was found dead, and no
    /// probe has judged its path since): only then do `REACHABLE`
    /// transitions pass the filter.
    func awaitReturn(_ awaited: Bool) throws(NetlinkError) {
        let arming = awaited && !socket.wantsReachable
        try socket.letThroughReachable(awaited)
        guard arming else { return }
        // A gateway may have answered between its FAILED and now, while
        // the old filter dropped the news: the kernel's routine re-resolve
        // at the app's next packet takes milliseconds. Its entry as it is
        // now closes that gap; missed, the return waited for the retry.
        // Once per neighbour: both families' paths may share one (RTA_VIA).
        for egress in Set(gateways.values) {
            guard let gateway = egress.gateway else { continue }
            try socket.ask(about: gateway, interfaceIndex: egress.index)
        }
    }

    /// What the kernel said of the watched gateways since the last call.
    func take() throws(NetlinkError) -> [(family: AddressFamily, state: NeighbourRecord.State)] {
        try socket.read().flatMap { record in
            Self.families(of: record, gateways: gateways).map { ($0, record.state) }
        }
    }

    /// The published paths with a gateway: a path without one has no
    /// neighbour to watch.
    static func gateways(of status: NetworkStatus) -> [AddressFamily: PathEgress] {
        PathEgress.of(status).filter { $0.value.gateway != nil }
    }

    /// The families whose gateway `record` is: the same address on the
    /// same link. Both, where an IPv4 route goes via the IPv6 router's
    /// link-local address (RTA_VIA) as IPv6's does.
    static func families(of record: NeighbourRecord, gateways: [AddressFamily: PathEgress]) -> [AddressFamily] {
        [AddressFamily.ipv4, .ipv6].filter { family in
            gateways[family].map { $0.index == record.interfaceIndex && $0.gateway == record.address } ?? false
        }
    }
}
