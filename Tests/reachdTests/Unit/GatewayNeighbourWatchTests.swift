import Testing
@testable import Reachability
@testable import reachd
import TestSupport

/// Which neighbour entries are the published paths' gateways.
@Suite("The gateways' neighbour entries")
struct GatewayNeighbourWatchTests {
    @Test func onlyAPublishedGatewayOnItsOwnLinkCounts() {
        let ipv4 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1")
        let ipv6 = NetworkPath(interface: "wlan0", index: 3, family: .ipv6, gateway: "fe80::1")
        let status = NetworkStatus.built(ipv4: .through(ipv4), ipv6: .through(ipv6))
        let gateways = GatewayNeighbourWatch.gateways(of: status)
        func families(
            _ index: Int, _ address: String, in gateways: [AddressFamily: PathEgress] = gateways
        ) -> [AddressFamily] {
            GatewayNeighbourWatch.families(
                of: NeighbourRecord(interfaceIndex: index, address: IPAddress(address)!, state: .failed), gateways: gateways)
        }
        #expect(families(2, "192.0.2.1") == [.ipv4])
        #expect(families(3, "fe80::1") == [.ipv6])
        #expect(families(3, "192.0.2.1").isEmpty, "the same address on another link is another neighbour")
        #expect(families(2, "192.0.2.9").isEmpty, "a peer on the link, not the gateway")
        // IPv4 via the IPv6 router's link-local (RTA_VIA): one neighbour, both families' gateway.
        let via = NetworkStatus.built(
            ipv4: .through(NetworkPath(interface: "wlan0", index: 3, family: .ipv4, gateway: "fe80::1")), ipv6: .through(ipv6))
        #expect(families(3, "fe80::1", in: GatewayNeighbourWatch.gateways(of: via)) == [.ipv4, .ipv6])
        let onLink = NetworkPath(interface: "wg0", index: 4, family: .ipv4, gateway: nil)
        let tunnel = NetworkStatus.built(ipv4: .through(onLink))
        #expect(GatewayNeighbourWatch.gateways(of: tunnel).isEmpty, "a path with no gateway has no neighbour to watch")
    }
}
