import Foundation
import Testing
@testable import Reachability
@testable import reachd

@Suite("What a change line says")
struct StatusFormatterTests {
    static func status(
        ipv4: ReachabilityLevel = .online, reason: UnreachableReason? = nil, connectivity: Connectivity = .unknown,
        interfaces: [InterfaceStatus]
    ) -> NetworkStatus {
        let path = ipv4 == .online ? NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1") : nil
        return NetworkStatus(
            ipv4: FamilyStatus(reachability: ipv4, reason: ipv4 == .online ? nil : reason, path: path),
            ipv6: FamilyStatus(reachability: .offline, reason: .noRoute, path: nil),
            connectivity: connectivity, interfaces: interfaces, seq: 1, changedAt: Date(timeIntervalSince1970: 0), source: .daemon)
    }

    static func link(_ name: String, _ index: Int, carrier: Bool = true, addresses: [String] = []) -> InterfaceStatus {
        InterfaceStatus(
            name: name, index: index, up: true, carrier: carrier, operstate: carrier ? "up" : "down", loopback: false,
            addresses: addresses.map { InterfaceAddress(address: $0, prefix: 24, family: .ipv4, scope: "global") })
    }

    @Test func itNamesEachDifference() {
        let before = Self.status(interfaces: [Self.link("eth0", 2, addresses: ["192.0.2.10"]), Self.link("eth1", 3)])
        let after = Self.status(
            ipv4: .local, reason: .noCarrier, connectivity: .none,
            interfaces: [Self.link("eth0", 2, carrier: false, addresses: ["192.0.2.11"]), Self.link("wlan0", 4)])
        #expect(StatusFormatter.changes(from: before, to: after) == [
            "IPv4 online → local (\(UnreachableReason.noCarrier))", "connectivity unknown → none",
            "eth0 carrier lost", "eth0 +192.0.2.11/24", "eth0 -192.0.2.10/24", "+wlan0", "-eth1",
        ])
    }

    @Test func twoLinesForTwoChangesNeverLookAlike() {
        let plain = Self.status(interfaces: [Self.link("lo", 1)])
        let added = Self.status(interfaces: [Self.link("lo", 1, addresses: ["10.9.0.1"])])
        let first = StatusFormatter.changeLine(added, since: plain)
        let second = StatusFormatter.changeLine(plain, since: added)
        #expect(first.hasSuffix("| lo +10.9.0.1/24") && second.hasSuffix("| lo -10.9.0.1/24"))
        #expect(StatusFormatter.changeLine(plain) == StatusFormatter.changeLine(plain, since: nil), "the first line: no diff")
    }
}
