import Foundation
import Glibc
import Testing
@testable import Reachability

/// The name servers of a `resolv.conf(5)`, read as glibc's resolver reads them.
@Suite("Resolver configuration")
struct ResolverConfigurationTests {
    @Test func theFirstThreeNameserversInOrder() {
        let text = """
            # written by NetworkManager
            search example.com
            nameserver 192.0.2.53
            ; a comment
            nameserver   2001:db8::53
            nameserver\tfe80::1%eth0
            nameserver 198.51.100.53
            options edns0
            """
        let servers = ResolverConfiguration(parsing: text).servers
        #expect(servers.map(\.description) == ["192.0.2.53", "2001:db8::53", "fe80::1%eth0"], "glibc asks three")
        #expect(servers[2].address.description == "fe80::1" && servers[2].zone == "eth0", "the zone is the link it is asked on")
    }

    /// A zone names a link, by name or number; glibc ignores one on IPv4,
    /// and an empty one is none.
    @Test func aZoneIsKeptForIPv6Only() {
        #expect(NameServer("fe80::1%2")?.zone == "2")
        #expect(NameServer("192.0.2.53%eth0").map { $0.zone == nil && $0.description == "192.0.2.53" } == true)
        #expect(NameServer("fe80::1%")?.zone == nil)
        #expect(NameServer("fe80::zz%eth0") == nil)
        let eth0 = LinkRecord(index: 2, name: "eth0", isUp: true, hasCarrier: true, isLoopback: false, operationalState: .up)
        #expect(NameServer("fe80::1%eth0")?.linkIndex(in: [2: eth0]) == 2)
        #expect(NameServer("fe80::1%wlan0")?.linkIndex(in: [2: eth0]) == 0, "no such link: one the kernel refuses")
        #expect(NameServer("fe80::1")?.linkIndex(in: [2: eth0]) == nil)
    }

    @Test func whatDoesNotParseIsSkippedAsTheResolverSkipsIt() {
        let text = "nameserver\nnameserver not-an-address\nnameservers 192.0.2.1\n#nameserver 192.0.2.2\nnameserver 192.0.2.3"
        #expect(ResolverConfiguration(parsing: text).servers.map(\.description) == ["192.0.2.3"])
        #expect(ResolverConfiguration(parsing: "").servers.isEmpty)
    }

    @Test func systemdResolvedsStubPointsElsewhere() {
        #expect(ResolverConfiguration(parsing: "nameserver 127.0.0.53\noptions edns0 trust-ad").pointsAtResolvedStub)
        #expect(!ResolverConfiguration(parsing: "nameserver 127.0.0.53\nnameserver 192.0.2.53").pointsAtResolvedStub,
            "a real server beside the stub is asked too")
        #expect(!ResolverConfiguration(parsing: "").pointsAtResolvedStub)
    }

    /// Where resolv.conf points at resolved's stub, resolved's own list
    /// counts, all of it; an empty one is no server, and the stub stands
    /// only where that list can't be read.
    @Test func behindTheStubResolvedsServersCount() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resolver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let etc = directory.appendingPathComponent("resolv.conf"), resolved = directory.appendingPathComponent("resolved.conf")
        try "nameserver 127.0.0.53\noptions edns0 trust-ad\n".write(to: etc, atomically: true, encoding: .utf8)
        func current() -> [String] {
            ResolverConfiguration.current(etc: etc.path, resolved: resolved.path).servers.map(\.description)
        }
        #expect(current() == ["127.0.0.53"], "resolved's list unreadable: the stub")
        try "# No DNS servers known.\n".write(to: resolved, atomically: true, encoding: .utf8)
        #expect(current() == [], "resolved knows none")
        try (1...4).map { "nameserver 192.0.2.\($0)" }.joined(separator: "\n").write(to: resolved, atomically: true, encoding: .utf8)
        #expect(current() == ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"], "resolved asks all it lists")
        #expect(ResolverConfiguration.current(etc: directory.appendingPathComponent("absent").path).servers.isEmpty)
    }

    /// Read on the daemon's event path: a FIFO in the file's place (no
    /// writer) is no file, and nothing waits for it.
    @Test(.timeLimit(.minutes(1))) func aFIFOInPlaceOfTheFileIsNotWaitedOn() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("resolv-\(UUID().uuidString)")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        defer { try? FileManager.default.removeItem(at: fifo) }
        #expect(ResolverConfiguration.current(etc: fifo.path).servers.isEmpty)
    }
}
