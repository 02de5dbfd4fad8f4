import Foundation
import Testing
import TestSupport
@testable import Reachability
@testable import reachd

#if canImport(Glibc)
import Glibc
#endif

/// The structured entries a change makes, and their datagrams in journald's
/// native protocol. Under a booted systemd, `journalctl MESSAGE_ID=` reads
/// them back (Systemd/check.sh, "journal-*").
@Suite("Journal entries")
struct JournalEntryTests {
    static func status(
        ipv4: ReachabilityLevel = .online, connectivity: Connectivity = .unknown, portal: String? = nil,
        watched: [DestinationStatus] = [], seq: UInt64 = 7
    ) -> NetworkStatus {
        let path = ipv4 == .online ? NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1") : nil
        return .built(
            ipv4: FamilyStatus(reachability: ipv4, reason: ipv4 == .online ? nil : .noRoute, path: path),
            ipv6: .noRoute(.local), connectivity: connectivity, portalURL: portal, seq: seq, watched: watched)
    }

    static func target(_ state: DestinationState, reason: DestinationReason? = nil) -> DestinationStatus {
        DestinationStatus(
            target: "db.internal:5432", host: "db.internal", port: 5432, state: state, reason: reason,
            via: state == .reachable
                ? DestinationRoute(interface: "wg0", index: 5, family: .ipv4, gateway: nil, table: 254, source: "10.8.0.2")
                : nil,
            addresses: [], seq: 1, source: .daemon)
    }

    /// The entries for `status` published after `previous` (the daemon's
    /// first when `nil`), its changes worked out as the publisher does.
    static func entries(from previous: NetworkStatus?, to status: NetworkStatus) -> [JournalEntry] {
        var status = status
        if let previous { status.changes = StatusDiff.changes(from: previous, to: status) }
        return JournalEntry.entries(for: status, first: previous == nil)
    }

    static func fields(_ entry: JournalEntry) -> [String: String] {
        Dictionary(entry.fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func aFamilyGoingOfflineIsOneNoticeWithItsReason() throws {
        let entries = Self.entries(from: Self.status(), to: Self.status(ipv4: .local, seq: 8))
        let entry = try #require(entries.count == 1 ? entries.first : nil, "\(entries)")
        #expect(entry.kind == .family && entry.priority == 5)
        #expect(entry.message == "IPv4 local: no_route (was online)")
        #expect(Self.fields(entry) == [
            "REACHD_FAMILY": "ipv4", "REACHD_REACHABILITY": "local", "REACHD_PREVIOUS_REACHABILITY": "online",
            "REACHD_REASON": "no_route", "REACHD_ONLINE": "0", "REACHD_SEQ": "8",
        ])
        let back = try #require(Self.entries(from: Self.status(ipv4: .local), to: Self.status()).first)
        #expect(back.priority == 6 && Self.fields(back)["REACHD_INTERFACE"] == "eth0" && Self.fields(back)["REACHD_GATEWAY"] == "192.0.2.1")
    }

    @Test func theFirstStatusSaysWhereTheDaemonStartedAndNothingElseIsAChange() {
        let first = Self.entries(from: nil, to: Self.status())
        #expect(first.map(\.kind) == [.family, .family], "both families; no check: no verdict; \(first)")
        #expect(first.allSatisfy { Self.fields($0)["REACHD_PREVIOUS_REACHABILITY"] == nil })
        #expect(Self.entries(from: Self.status(), to: Self.status(seq: 8)).isEmpty)
    }

    /// Online before and after, on another path: the handover's own entry,
    /// with the path before and after.
    @Test func aHandoverIsOneEntryWithBothPaths() throws {
        let before = Self.status()
        var after = Self.status(seq: 8)
        after.ipv4.path = NetworkPath(interface: "wg0", index: 5, family: .ipv4, gateway: nil, source: "10.8.0.2")
        let entries = Self.entries(from: before, to: after)
        let entry = try #require(entries.count == 1 ? entries.first : nil, "\(entries)")
        #expect(entry.kind == .path && entry.priority == 6)
        #expect(entry.message == "IPv4 path: eth0 via 192.0.2.1 → wg0")
        #expect(Self.fields(entry) == [
            "REACHD_FAMILY": "ipv4", "REACHD_INTERFACE": "wg0", "REACHD_SOURCE": "10.8.0.2",
            "REACHD_PREVIOUS_INTERFACE": "eth0", "REACHD_PREVIOUS_GATEWAY": "192.0.2.1", "REACHD_ONLINE": "1", "REACHD_SEQ": "8",
        ])
    }

    /// Under journald the stderr line is not written, so what no other kind
    /// covers is an entry too.
    @Test func linksAndMeteringAreEntriesOfTheirOwn() throws {
        let before = Self.status()
        var after = Self.status(seq: 8)
        after.interfaces = [InterfaceStatus(name: "veth3", index: 9, up: true, carrier: false, operstate: "down", loopback: false, addresses: [])]
        let entries = Self.entries(from: before, to: after)
        let entry = try #require(entries.count == 1 ? entries.first : nil, "\(entries)")
        #expect(entry.kind == .other && Self.fields(entry)["REACHD_CHANGE"] == "interfaces")
        #expect(entry.message == "veth3: up, no carrier, no addresses")
    }

    @Test func aPortalIsAConnectivityEntryWithItsURL() throws {
        let entries = Self.entries(
            from: Self.status(connectivity: .full), to: Self.status(connectivity: .portal, portal: "http://portal.example/login"))
        let entry = try #require(entries.count == 1 ? entries.first : nil, "\(entries)")
        #expect(entry.kind == .connectivity && entry.priority == 5)
        #expect(Self.fields(entry)["REACHD_CONNECTIVITY"] == "portal" && Self.fields(entry)["REACHD_PREVIOUS_CONNECTIVITY"] == "full")
        #expect(Self.fields(entry)["REACHD_PORTAL_URL"] == "http://portal.example/login")
    }

    @Test func aWatchedTargetSpeaksOnceResolvedAndOnEachChange() throws {
        let pending = Self.status(watched: [Self.target(.pending)])
        let reachable = Self.status(watched: [Self.target(.reachable)])
        #expect(Self.entries(from: nil, to: pending).allSatisfy { $0.kind == .family }, "pending says nothing")
        let resolved = try #require(Self.entries(from: pending, to: reachable).first)
        #expect(resolved.kind == .destination && Self.fields(resolved)["REACHD_PREVIOUS_STATE"] == nil)
        #expect(Self.fields(resolved)["REACHD_INTERFACE"] == "wg0" && resolved.message == "db.internal:5432 reachable via wg0")
        let lost = try #require(Self.entries(
            from: reachable, to: Self.status(watched: [Self.target(.unreachable, reason: .route(.noRoute))])).first)
        #expect(lost.priority == 5 && lost.message == "db.internal:5432 unreachable: no_route (was reachable)")
        #expect(Self.fields(lost)["REACHD_STATE"] == "unreachable" && Self.fields(lost)["REACHD_PREVIOUS_STATE"] == "reachable")
    }

    @Test func theIDsAreDistinct128BitIDsAndTheReadmeGivesThem() throws {
        let ids = JournalEntry.Kind.allCases.map(\.messageID)
        let readme = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        for id in ids { #expect(readme.contains("`\(id)`"), "README.md does not give \(id)") }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) && $0 == $0.lowercased() })
    }

    /// What journald's socket receives: `NAME=value` lines, each value's
    /// control characters escaped, so that no value can forge a field.
    @Test func theDatagramIsJournaldsNativeProtocol() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-journal-\(getpid()).sock").path
        unlink(path)
        let fd = try UnixSocket.bindDatagram(at: path)
        defer { close(fd); unlink(path) }
        var entry = try #require(Self.entries(from: Self.status(), to: Self.status(ipv4: .local)).first)
        entry.fields.append((name: "REACHD_TEST", value: "two\nPRIORITY=0"))
        #expect(JournalWriter(socketPath: path).send([entry]))
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        let datagram = Array(buffer[0..<max(count, 0)])
        #expect(datagram == JournalWriter.datagram(entry))
        let text = String(decoding: datagram, as: UTF8.self)
        #expect(text.hasPrefix("MESSAGE_ID=\(JournalEntry.Kind.family.messageID)\nMESSAGE=IPv4 local: no_route (was online)\nPRIORITY=5\nSYSLOG_IDENTIFIER=reachd\n"))
        #expect(text.contains("REACHD_FAMILY=ipv4\n"))
        #expect(text.hasSuffix("REACHD_TEST=two\\nPRIORITY=0\n"), "escaped: \(text)")
    }

    /// An interface name is whatever bytes a user with a network namespace
    /// of their own chose (the kernel allows any but `/`, `:` and white
    /// space): it reached MESSAGE and REACHD_DNS_SERVER as it came, escape
    /// sequences and all. Every field is escaped at the sink.
    @Test func controlBytesInANameReachNoJournalFieldAsTheyCame() throws {
        let name = "e\u{1B}[2Jth0\u{7}"
        var before = Self.status()
        before.dns = DNSStatus(state: .ok, servers: [DNSServer(address: "192.0.2.53", state: .reachable, reason: nil, interface: "eth0")])
        var after = Self.status(seq: 8)
        after.ipv4.path?.interface = name
        after.dns = DNSStatus(state: .ok, servers: [DNSServer(address: "192.0.2.53", state: .reachable, reason: nil, interface: name)])
        let entries = Self.entries(from: before, to: after)
        #expect(entries.contains { $0.message.contains(name) || $0.fields.contains { $0.value.contains(name) } },
                "the entries carry the name (escaping is the sink's)")
        for entry in entries {
            let datagram = JournalWriter.datagram(entry)
            #expect(!datagram.contains(0x1B) && !datagram.contains(0x07), "\(String(decoding: datagram, as: UTF8.self))")
            #expect(String(decoding: datagram, as: UTF8.self).contains(#"e\x1b[2Jth0\x07"#))
        }
    }

    /// A journald that stops reading (restarting, under I/O pressure) fills
    /// its socket's queue; the daemon's loop must not wait for it. A burst
    /// waits in the backlog, in order, and goes once journald reads again;
    /// beyond the backlog, entries are dropped and counted. Nothing else is
    /// lost.
    @Test(.timeLimit(.minutes(1))) func aJournalThatStopsReadingCostsEntriesNotTheLoop() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-journal-full-\(getpid()).sock").path
        unlink(path)
        let fd = try UnixSocket.bindDatagram(at: path)
        defer { close(fd); unlink(path) }
        var entry = try #require(Self.entries(from: Self.status(), to: Self.status(ipv4: .local)).first)
        let writer = JournalWriter(socketPath: path)
        let sent = JournalWriter.backlog + 2000
        let started = ContinuousClock.now
        for number in 0..<sent {
            entry.fields = [(name: "REACHD_TEST", value: "\(number)")]
            writer.send([entry])
        }
        #expect(ContinuousClock.now - started < .seconds(5), "sending did not wait for the reader")
        #expect(writer.isBacklogged && writer.dropped > 0, "a backlog, and \(writer.dropped) dropped beyond it")
        // journald reads again: what waited arrives, in order.
        var received: [Int] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                received += text.split(separator: "\n").filter { $0.hasPrefix("REACHD_TEST=") }.compactMap { Int($0.dropFirst(12)) }
                continue
            }
            guard writer.isBacklogged else { break }
            writer.flush()
        }
        #expect(received.count + writer.dropped == sent, "\(received.count) received, \(writer.dropped) dropped of \(sent)")
        #expect(received == received.sorted() && received.count > JournalWriter.backlog, "in order, the backlog included")
    }

    /// Name resolution has an entry of its own: its state, the one before,
    /// each server with its route; a notice when names can't be asked, and
    /// an entry (no previous state) when only the servers moved.
    @Test func nameResolutionHasItsOwnEntry() throws {
        var before = Self.status()
        before.dns = DNSStatus(state: .ok, servers: [
            DNSServer(address: "192.0.2.53", state: .reachable, reason: nil, interface: "eth0"),
        ])
        var after = Self.status(seq: 8)
        after.dns = DNSStatus(state: .unroutable, servers: [
            DNSServer(address: "192.0.2.53", state: .unreachable, reason: .noRoute, interface: nil),
        ])
        let entry = try #require(Self.entries(from: before, to: after).first { $0.kind == .dns })
        #expect(entry.priority == 5)
        #expect(entry.message == "DNS: unroutable (192.0.2.53 unreachable (no route)) (was ok)")
        #expect(entry.fields.filter { $0.name.hasPrefix("REACHD_DNS") || $0.name == "REACHD_PREVIOUS_DNS" }.map { "\($0.name)=\($0.value)" } == [
            "REACHD_DNS=unroutable", "REACHD_PREVIOUS_DNS=ok", "REACHD_DNS_SERVER=192.0.2.53 unreachable",
        ])
        var moved = before
        moved.seq = 9
        moved.dns.servers[0].interface = "wg0"
        let move = try #require(Self.entries(from: before, to: moved).first)
        #expect(move.kind == .dns && move.priority == 6 && !move.fields.contains { $0.name == "REACHD_PREVIOUS_DNS" })
        #expect(move.fields.contains { $0.name == "REACHD_DNS_SERVER" && $0.value == "192.0.2.53 reachable wg0" })
        #expect(Self.entries(from: nil, to: before).contains { $0.kind == .dns }, "where the daemon started from")
    }
}
