import Foundation
import Testing
@testable import Reachability
@testable import reachd
import TestSupport

@Suite("What a change line says")
struct StatusFormatterTests {
    static func status(
        ipv4: ReachabilityLevel = .online, reason: UnreachableReason? = nil, connectivity: Connectivity = .unknown,
        interfaces: [InterfaceStatus]
    ) -> NetworkStatus {
        let path = ipv4 == .online ? NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1") : nil
        return .built(
            ipv4: FamilyStatus(reachability: ipv4, reason: ipv4 == .online ? nil : reason, path: path),
            connectivity: connectivity, interfaces: interfaces)
    }

    static func link(_ name: String, _ index: Int, carrier: Bool = true, addresses: [String] = []) -> InterfaceStatus {
        InterfaceStatus(
            name: name, index: index, up: true, carrier: carrier, operstate: carrier ? "up" : "down", loopback: false,
            addresses: addresses.map { InterfaceAddress(address: $0, prefix: 24, family: .ipv4, scope: "global") })
    }

    /// The status as published after `before`: its changes worked out as
    /// the publisher does.
    static func published(_ status: NetworkStatus, after before: NetworkStatus) -> NetworkStatus {
        var status = status
        status.changes = StatusDiff.changes(from: before, to: status)
        return status
    }

    @Test func itNamesEachChange() {
        let before = Self.status(interfaces: [Self.link("eth0", 2, addresses: ["192.0.2.10"]), Self.link("eth1", 3)])
        let after = Self.published(Self.status(
            ipv4: .local, reason: .noCarrier, connectivity: .none,
            interfaces: [Self.link("eth0", 2, carrier: false, addresses: ["192.0.2.11"]), Self.link("wlan0", 4)]), after: before)
        #expect(after.changes.map { StatusFormatter.describe($0, in: after) } == [
            "IPv4 online → local (\(UnreachableReason.noCarrier))", "IPv4 path: eth0 via 192.0.2.1 → none",
            "connectivity unknown → none", "eth0: up, no carrier, 192.0.2.11/24; -eth1; wlan0: up, carrier, no addresses",
        ])
    }

    /// `reachd monitor`'s words for a handover: where the path was, where it is.
    @Test func aHandoverSaysWhereThePathWasAndIs() {
        let before = Self.status(interfaces: [])
        var vpn = before
        vpn.ipv4.path = NetworkPath(interface: "tun0", index: 9, family: .ipv4, gateway: nil, source: "10.8.0.2")
        #expect(StatusFormatter.changeLine(Self.published(vpn, after: before), timed: false).hasSuffix("| IPv4 path: eth0 via 192.0.2.1 → tun0"))
        var renumbered = before
        renumbered.ipv4.path?.source = "192.0.2.77"
        var numbered = before
        numbered.ipv4.path?.source = "192.0.2.10"
        #expect(StatusFormatter.changeLine(Self.published(renumbered, after: numbered), timed: false)
            .hasSuffix("| IPv4 path: eth0 via 192.0.2.1 from 192.0.2.10 → 192.0.2.77"))
    }

    @Test func twoLinesForTwoChangesNeverLookAlike() {
        let plain = Self.status(interfaces: [Self.link("lo", 1)])
        let added = Self.status(interfaces: [Self.link("lo", 1, addresses: ["10.9.0.1"])])
        let first = StatusFormatter.changeLine(Self.published(added, after: plain))
        let second = StatusFormatter.changeLine(Self.published(plain, after: added))
        #expect(first.hasSuffix("| lo: up, carrier, 10.9.0.1/24") && second.hasSuffix("| lo: up, carrier, no addresses"))
        #expect(!StatusFormatter.changeLine(plain).contains("|"), "the first line: no changes")
    }
}
