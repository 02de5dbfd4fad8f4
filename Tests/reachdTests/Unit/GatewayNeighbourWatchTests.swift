import Testing
@testable import Reachability
@testable import reachd

/// Which neighbour entries are the published paths' gateways.
@Suite("The gateways' neighbour entries")
struct GatewayNeighbourWatchTests {
    @Test func onlyAPublishedGatewayOnItsOwnLinkCounts() {
        let ipv4 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1")
        let ipv6 = NetworkPath(interface: "wlan0", index: 3, family: .ipv6, gateway: "fe80::1")
        let status = NetworkStatus(
            ipv4: FamilyStatus(reachability: .online, reason: nil, path: ipv4),
            ipv6: FamilyStatus(reachability: .online, reason: nil, path: ipv6),
            interfaces: [], seq: 1, changedAt: .init(timeIntervalSince1970: 0), source: .daemon)
        let gateways = GatewayNeighbourWatch.gateways(of: status)
        func family(_ index: Int, _ address: String) -> AddressFamily? {
            GatewayNeighbourWatch.family(
                of: NeighbourRecord(interfaceIndex: index, address: IPAddress(address)!, state: .failed), gateways: gateways)
        }
        #expect(family(2, "192.0.2.1") == .ipv4)
        #expect(family(3, "fe80::1") == .ipv6)
        #expect(family(3, "192.0.2.1") == nil, "the same address on another link is another neighbour")
        #expect(family(2, "192.0.2.9") == nil, "a peer on the link, not the gateway")
        let onLink = NetworkPath(interface: "wg0", index: 4, family: .ipv4, gateway: nil)
        let tunnel = NetworkStatus(
            ipv4: FamilyStatus(reachability: .online, reason: nil, path: onLink),
            ipv6: FamilyStatus(reachability: .offline, reason: .noRoute, path: nil),
            interfaces: [], seq: 1, changedAt: .init(timeIntervalSince1970: 0), source: .daemon)
        #expect(GatewayNeighbourWatch.gateways(of: tunnel).isEmpty, "a path with no gateway has no neighbour to watch")
    }
}
