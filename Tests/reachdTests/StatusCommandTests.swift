import Foundation
import Testing
@testable import Reachability

/// `reachd status` against a daemon it does not start.
@Suite("reachd status")
struct StatusCommandTests {
    /// A status from a newer daemon: a key this client does not know, and a
    /// timestamp that a decode and re-encode could round.
    static let newerDaemonsLine = #"{"changed_at":"2026-11-21T05:10:00.123Z","connectivity":"unknown","families":{"ipv4":{"path":{"family":"ipv4","gateway":"192.0.2.1","index":2,"interface":"eth0"},"reachability":"online","reason":null},"ipv6":{"path":null,"reachability":"local","reason":"no_route"}},"interfaces":[],"ipv4":"online","ipv6":"local","key_from_a_newer_daemon":{"nested":[1,2]},"online":true,"primary":{"family":"ipv4","gateway":"192.0.2.1","index":2,"interface":"eth0"},"reachability":"online","seq":7,"source":"daemon","type":"status","version":1}"#

    @Test func jsonIsTheDaemonsLineAsReceived() async throws {
        #expect(throws: Never.self) { try DaemonMessage.decode(Array(Self.newerDaemonsLine.utf8)) }
        let daemon = try FakeDaemon(answering: Self.newerDaemonsLine)
        let result = try await Subprocess.run([Reachd.binary, "status", "--json", "--socket", daemon.path])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == Self.newerDaemonsLine + "\n", "printed as received, unknown keys and all")
        #expect(result.error.isEmpty, "answered by the daemon: no fallback notice")
    }
}
