#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import TestSupport
@testable import Reachability

/// A status shares its fields between copies until one changes: a copy is
/// changed alone, in place or by assignment, whatever holds the original.
struct NetworkStatusValueTests {
    private static let path = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1")
    private static let link = InterfaceStatus(
        name: "eth0", index: 2, up: true, carrier: true, operstate: "up", loopback: false, addresses: [])

    private static func original() -> NetworkStatus {
        NetworkStatus.built(ipv4: .through(path), interfaces: [link], changedAt: Date(timeIntervalSince1970: 1_000))
    }

    @Test func aChangedCopyLeavesTheOriginalAsItWas() {
        let original = Self.original()
        var copy = original
        #expect(copy == original)
        copy.interfaces.append(InterfaceStatus(
            name: "wlan0", index: 3, up: true, carrier: false, operstate: "down", loopback: false, addresses: []))
        copy.seq += 1
        copy.ipv4 = FamilyStatus(reachability: .offline, reason: nil, path: nil)
        copy.changes = [.reachability(.ipv4, from: .online, to: .offline)]
        copy.portalURL = "http://portal.example/"
        #expect(original == Self.original(), "the original changed with its copy")
        #expect(original.interfaces.count == 1 && original.seq == Self.original().seq)
        #expect(original.ipv4.reachability == .online && original.changes.isEmpty && original.portalURL == nil)
        #expect(copy != original)
        #expect(copy.interfaces.count == 2 && copy.ipv4.reachability == .offline && copy.changes.count == 1)
    }

    @Test func copiesMadeOnOtherThreadsChangeAlone() async {
        let original = Self.original()
        let seqs = await withTaskGroup(of: UInt64.self) { group in
            for step in 1...8 {
                group.addTask {
                    var copy = original
                    for _ in 0..<1_000 { copy.seq += UInt64(step) }
                    return copy.seq - original.seq
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(seqs.sorted() == (1...8).map { UInt64($0) * 1_000 })
        #expect(original == Self.original())
    }

    @Test func statusesBuiltApartAreEqualWhenTheirFieldsAre() {
        #expect(Self.original() == Self.original())
        var other = Self.original()
        other.dns = DNSStatus(state: .failing, servers: [])
        #expect(other != Self.original())
    }

    @Test func aStatusShowsItsFieldsNotItsStorage() {
        let shown = String(describing: Self.original())
        #expect(shown.hasPrefix("NetworkStatus(ipv4: "), "\(shown)")
        #expect(shown.contains("interfaces: [") && !shown.contains("storage"))
    }
}
