import Foundation
import Testing
import TestSupport
@testable import Reachability

/// `[watch] targets` (here `--watch`): the daemon's own verdicts reach
/// `reachd status` (a "Watched" section, a `watched` key) and full
/// subscribers, and leave summary subscribers alone.
@Suite("Targets the daemon watches", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct WatchedTargetTests {
    static let onLink = "10.77.0.1:8080"
    static let beyond = "203.0.113.5:443"
    /// A name, from the hosts file: the daemon watches /etc for it.
    static let named = "db.test:5432"

    @Test func statusShowsThemAndAFullSubscriberHearsThemChange() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let etc = try await DestinationReachabilityTests.resolverFiles(
            network, hosts: "203.0.113.9 db.test", nameServer: "127.0.0.1")
        let daemon = try await network.startDaemon(
            ["--watch", Self.onLink, "--watch", Self.named, "--watch", Self.beyond], etc: etc)
        let (full, first) = try await SocketClient.subscribed(to: network.socketPath)
        #expect(first.watched.map(\.target) == [Self.onLink, Self.named, Self.beyond], "in the order configured")
        var resolved = first
        while resolved.watched.contains(where: { $0.state == .pending }) { resolved = try await full.readStatus() }
        #expect(resolved.watched.allSatisfy { $0.isReachable }, "\(resolved.watched)")
        #expect(!daemon.errorOutput.contains("cannot wait for the resolver's files"), "\(daemon.errorOutput)")
        let summary = try SocketClient(path: network.socketPath)
        try summary.send(ClientRequest(.subscribe, detail: .summary).line)
        let firstSummary = try await summary.readStatus()
        #expect(firstSummary.watched.isEmpty, "a summary carries no watched targets")

        let human = try await network.reachd("status", "--socket=\(network.socketPath)")
        #expect(human.output.contains("Watched (by the daemon, as its own user):\n  \(Self.onLink) reachable via vh\n"),
                "\(human.output)")
        #expect(human.output.contains("  \(Self.beyond) reachable via vh, gateway 10.77.0.1"), "\(human.output)")
        let json = try await network.reachd("status", "--json", "--socket=\(network.socketPath)")
        #expect(json.output.contains(#""watched":[{"addresses":"#), "\(json.output)")

        // The default route goes: the host is offline, the targets beyond
        // it unreachable, the on-link one still reachable, all in the one
        // status that tells the change: none says the route went and the
        // targets are still reachable.
        try await network.inHost("route del default")
        let offline = try await full.readStatus()
        #expect(!offline.online && offline.seq == resolved.seq + 1, "\(offline.seq) after \(resolved.seq)")
        #expect(offline.watched.map(\.isReachable) == [true, false, false], "\(offline.watched)")
        #expect(offline.watched.last?.reason == .route(.noRoute), "\(offline.watched)")

        // A route to the far target alone: full subscribers hear it, the
        // summary does not change, so its next line is the default route's.
        try await network.inHost("route add 203.0.113.0/24 via 10.77.0.1")
        var again = try await full.readStatus()
        while again.watched.last?.isReachable != true { again = try await full.readStatus() }
        try await network.inHost("route add default via 10.77.0.1")
        let summaryOffline = try await summary.readStatus()
        #expect(!summaryOffline.online, "the summary heard the default route go")
        let next = try await summary.readStatus()
        #expect(next.online && next.seq > again.seq, "nothing between: the watched target's change is no summary's")
        _ = daemon
    }
}
