import Foundation
import Testing
import TestSupport
@testable import Reachability

/// The host's own connections as evidence about its path: the kernel tells
/// every TCP connection's end, and failures through the path start a probe
/// that decides, with no app's report and no probe due. A working network
/// (one dead server, some loss, failures on the host or the link) is never
/// called broken, and costs the daemon nothing.
@Suite("Passive evidence from the host's connections", .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct PassiveEvidenceTests {
    static let script = packageRoot.appendingPathComponent("Tests/reachdTests/Harness/tcp-traffic.py").path
    /// Off-link servers behind the gateway, on its loopback.
    static let servers = ["192.0.2.11", "192.0.2.12", "192.0.2.13"]
    /// Theirs: not the check server's 8080, so that the log's check URL
    /// cannot pass for a leaked port.
    static let port = 4443

    /// One connection's end, as the app saw it.
    struct Outcome {
        var at: Date
        var answered: Bool
    }

    /// A host online through the gateway, three servers behind it, the
    /// check's server on the gateway, and the daemon with `arguments`.
    static func online(_ arguments: [String]) async throws
        -> (network: TestNetwork, check: CheckServer, servers: Subprocess, daemon: Subprocess)
    {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        for server in servers { try await network.inGateway("addr add \(server)/32 dev lo") }
        let listener = try Subprocess(["/usr/bin/env", "ip", "netns", "exec", network.gateway, "/usr/bin/python3", script, "serve", "\(port)"])
        _ = try await eventually("the servers listen") { listener.outputLines.first == "ready" ? true : nil }
        let check = try await CheckServer(in: network, answering: .init(status: 204))
        let daemon = try await network.startDaemon(["--check-url", check.url] + arguments)
        try await network.waitForStatus("full") { $0.connectivity == .full }
        return (network, check, listener, daemon)
    }

    /// An app's connections from the host: one every `every` seconds, to
    /// `addresses` in turn, each given `timeout`.
    static func app(_ network: TestNetwork, to addresses: [String], every: Double = 0.2, timeout: Double = 1, seconds: Int)
        throws -> Subprocess
    {
        try Subprocess(network.inHost(etc: nil) + ["/usr/bin/python3", script, "connect", "\(every)", "\(timeout)", "\(seconds)"]
            + addresses.map { "\($0):\(port)" })
    }

    static func outcomes(_ app: Subprocess) -> [Outcome] {
        app.outputLines.compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 2, let seconds = Double(words[0]) else { return nil }
            return Outcome(at: Date(timeIntervalSince1970: seconds), answered: words[1] == "ok")
        }
    }

    /// A sample's value in an exposition.
    static func value(of series: String, in exposition: String) -> Int? {
        exposition.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Int($0.split(separator: " ").last!) }
    }

    /// The gateway's address goes (a dead upstream box), its neighbour
    /// entry fresh from the app's own traffic, so the kernel believes it
    /// for up to 45 s: the app's failing connections start a probe, whose
    /// failure is believed at once. `limited` within 6 s of the first
    /// failure, with no `reachd check` and no `reportFailure`. The gateway
    /// back, the app's first answered connection starts a probe: `full`
    /// within 5 s of it. No server's address reaches the log or the metrics.
    @Test(.timeLimit(.minutes(2)))
    func connectionsThroughADeadGatewayLeaveFullAndTheirReturnComesBack() async throws {
        let (network, check, servers, daemon) = try await Self.online(["--check-timeout", "3", "--metrics-listen", "yes"])
        defer { [daemon, servers].forEach { $0.signal(SIGTERM) } }
        let app = try Self.app(network, to: Self.servers, seconds: 60)
        defer { app.signal(SIGTERM) }
        // A path dies long after its last probe, as a rule: the 5 s that
        // keep probes of a family apart have passed.
        _ = try await eventually("the app's connections are answered for 5 s") {
            Self.outcomes(app).filter(\.answered).count >= 25 ? true : nil
        }

        let monitor = try network.startReachd("monitor", "--socket=\(network.socketPath)")
        defer { monitor.signal(SIGTERM) }
        try await network.inGateway("addr del 10.77.0.1/24 dev vg")
        let removed = Date()
        let dead = try await network.waitForStatus(timeout: .seconds(20), "connectivity leaves full") { $0.connectivity != .full }
        let failed = try #require(Self.outcomes(app).first { !$0.answered && $0.at > removed }, "\(app.output)")
        #expect(dead.connectivity == .limited && !dead.online && dead.connectivityReason == .connectionsFail, "\(dead)")
        #expect(dead.changedAt.timeIntervalSince(failed.at) < 6, "\(dead.changedAt.timeIntervalSince(failed.at)) s after the first failure")
        #expect(daemon.errorOutput.contains("connections through this path fail"), "\(daemon.errorOutput.suffix(3000))")
        // Not the kernel's neighbour table: it still believed the gateway.
        #expect(!daemon.errorOutput.contains("the gateway stopped answering"), "\(daemon.errorOutput.suffix(3000))")
        // Said in words: why, not only `full → limited`.
        let said = try await network.reachd("status", "--socket=\(network.socketPath)")
        #expect(said.output.contains("Connectivity: limited (connections through this path fail)"), "\(said.output)")
        #expect(monitor.output.contains("connectivity full → limited (connections through this path fail)"), "\(monitor.output)")

        try await network.inGateway("addr add 10.77.0.1/24 dev vg")
        let back = Date()
        let full = try await network.waitForStatus(timeout: .seconds(15), "full again") { $0.connectivity == .full }
        #expect(full.connectivityReason == .expectedAnswer)
        let answered = try #require(Self.outcomes(app).first { $0.answered && $0.at > back }, "\(app.output)")
        #expect(full.changedAt.timeIntervalSince(answered.at) < 5, "\(full.changedAt.timeIntervalSince(answered.at)) s after the first answer")
        #expect(daemon.errorOutput.contains("a connection through this path was answered"), "\(daemon.errorOutput.suffix(3000))")

        let metrics = try #require(try await MetricsScrapeTests.fetch("http://127.0.0.1:10077/metrics", in: network))
        // One suspicion per 5 s, however many connections fail.
        let stalls = Self.value(of: "reachd_stalls_total{family=\"ipv4\"}", in: metrics)
        #expect(stalls.map { (1...2).contains($0) } ?? false, "\(metrics)")
        #expect((Self.value(of: "reachd_connections_failed_total{family=\"ipv4\"}", in: metrics) ?? 0) >= 3, "\(metrics)")
        for server in Self.servers {
            #expect(!daemon.errorOutput.contains(server), "a peer's address in the log")
            #expect(!metrics.contains(server), "a peer's address in the metrics")
        }
        #expect(!daemon.errorOutput.contains(":\(Self.port)"), "a peer's port in the log")
        withExtendedLifetime(check) {}
    }

    /// One server drops every connection while two others answer: failures
    /// to one peer are that server's, not the path's. `full` throughout 30 s,
    /// and no probe asked.
    @Test(.timeLimit(.minutes(2)))
    func oneDeadServerAmongWorkingOnesChangesNothing() async throws {
        let (network, check, servers, daemon) = try await Self.online([])
        defer { [daemon, servers].forEach { $0.signal(SIGTERM) } }
        try await TestNetwork.sh(
            "ip netns exec \(network.gateway) nft 'add table inet reachd_dead; "
                + "add chain inet reachd_dead in { type filter hook input priority 0; }; "
                + "add rule inet reachd_dead in ip daddr \(Self.servers[2]) tcp dport \(Self.port) drop'")
        let monitor = try network.startReachd("monitor", "--json", "--socket=\(network.socketPath)")
        defer { monitor.signal(SIGTERM) }
        let app = try Self.app(network, to: Self.servers, seconds: 30)
        try await app.wait(timeout: .seconds(40))
        let outcomes = Self.outcomes(app)
        #expect(outcomes.filter { !$0.answered }.count >= 40, "the dead server failed, or this proves nothing: \(app.output)")
        #expect(outcomes.filter(\.answered).count >= 80, "\(app.output)")
        #expect(!monitor.statuses.isEmpty && monitor.statuses.allSatisfy { $0.connectivity == .full }, "\(monitor.output)")
        #expect(!daemon.errorOutput.contains("connections through this path fail"), "\(daemon.errorOutput.suffix(3000))")
        withExtendedLifetime(check) {}
    }

    /// 2% of packets lost both ways at the gateway (nftables' `numgen`:
    /// `sch_netem` is not on every kernel) while the app makes 5 requests a
    /// second for 60 s: some connections fail, the path is never suspected.
    @Test(.timeLimit(.minutes(3)))
    func randomLossRaisesNoSuspicion() async throws {
        let (network, check, servers, daemon) = try await Self.online([])
        defer { [daemon, servers].forEach { $0.signal(SIGTERM) } }
        try await TestNetwork.sh(
            "ip netns exec \(network.gateway) nft 'add table inet reachd_loss; "
                + "add chain inet reachd_loss in { type filter hook prerouting priority 0; }; "
                + "add chain inet reachd_loss out { type filter hook output priority 0; }; "
                + "add rule inet reachd_loss in tcp dport \(Self.port) numgen random mod 100 < 2 drop; "
                + "add rule inet reachd_loss out tcp sport \(Self.port) numgen random mod 100 < 2 drop'")
        let monitor = try network.startReachd("monitor", "--json", "--socket=\(network.socketPath)")
        defer { monitor.signal(SIGTERM) }
        let app = try Self.app(network, to: Self.servers, seconds: 60)
        try await app.wait(timeout: .seconds(75))
        let outcomes = Self.outcomes(app)
        #expect(outcomes.filter(\.answered).count >= 250, "\(app.output)")
        #expect(outcomes.contains { !$0.answered }, "the loss failed some connections, or this proves nothing: \(app.output)")
        #expect(!monitor.statuses.isEmpty && monitor.statuses.allSatisfy { $0.connectivity == .full }, "\(monitor.output)")
        #expect(!daemon.errorOutput.contains("connections through this path fail"), "\(daemon.errorOutput.suffix(3000))")
        withExtendedLifetime(check) {}
    }

    /// Failed connections to the host's own ports and to a missing
    /// neighbour on the link say nothing of the gateway: no probe. The same
    /// daemon then sees off-link failures and probes once; the probe finds
    /// the path working, and `full` stands.
    @Test(.timeLimit(.minutes(2)))
    func failuresOnTheHostOrTheLinkStartNoProbe() async throws {
        let (network, check, servers, daemon) = try await Self.online([])
        defer { [daemon, servers].forEach { $0.signal(SIGTERM) } }
        // The host's own port, dropped: a connect that gets nothing back.
        try await TestNetwork.sh(
            "ip netns exec \(network.host) nft 'add table inet reachd_local; "
                + "add chain inet reachd_local in { type filter hook input priority 0; }; "
                + "add rule inet reachd_local in iif lo tcp dport 9 drop'")
        let probes = check.requests
        // Two missing neighbours: as many peers as a suspicion needs, were
        // on-link peers counted.
        let local = try Self.app(network, to: ["10.77.0.98", "10.77.0.99"], every: 0.1, timeout: 0.5, seconds: 3)
        let localPort = try Subprocess(network.inHost(etc: nil) + ["/usr/bin/python3", Self.script, "connect", "0.2", "0.5", "3", "127.0.0.1:9", "127.0.0.3:9"])
        try await local.wait(timeout: .seconds(15))
        try await localPort.wait(timeout: .seconds(15))
        #expect(Self.outcomes(local).filter { !$0.answered }.count >= 20, "\(local.output)")
        #expect(Self.outcomes(localPort).filter { !$0.answered }.count >= 10, "\(localPort.output)")
        // The kernel holds the on-link SYNs for its 3 s of address
        // resolution: their sockets end only then, and none may probe.
        #expect(try await holdsThroughout(.seconds(4)) { check.requests == probes }, "a probe for failures on the host or the link")
        #expect(!daemon.errorOutput.contains("connections through this path fail"), "\(daemon.errorOutput.suffix(3000))")

        // Control: the same daemon hears off-link failures (three servers
        // dropped at the gateway, some 30 failures) and asks a probe at
        // most once per 5 s for all of them.
        try await TestNetwork.sh(
            "ip netns exec \(network.gateway) nft 'add table inet reachd_dead; "
                + "add chain inet reachd_dead in { type filter hook input priority 0; }; "
                + "add rule inet reachd_dead in tcp dport \(Self.port) drop'")
        let stormStarted = ContinuousClock.now
        let remote = try Self.app(network, to: Self.servers, every: 0.1, timeout: 0.5, seconds: 3)
        try await remote.wait(timeout: .seconds(15))
        #expect(Self.outcomes(remote).filter { !$0.answered }.count >= 25, "\(remote.output)")
        _ = try await eventually("the daemon probes") { check.requests > probes ? true : nil }
        #expect(daemon.errorOutput.contains("connections through this path fail"), "\(daemon.errorOutput.suffix(3000))")
        #expect(try await holdsThroughout(stormStarted + .seconds(8) - .now) { check.requests - probes <= 2 },
                "probes for a storm of failures over 3.5 s: \(check.requests - probes)")
        let status = try await network.status().status
        #expect(status.connectivity == .full, "the probe decides: \(status)")
    }

    /// Without a check, a suspicion is said in the log (at info once a
    /// minute at most) and counted; `connectivity` stays `unknown`, as the
    /// connections alone never declare a path dead.
    @Test(.timeLimit(.minutes(1)))
    func withoutACheckASuspicionIsLoggedAndCounted() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        for server in Self.servers { try await network.inGateway("addr add \(server)/32 dev lo") }
        try await TestNetwork.sh(
            "ip netns exec \(network.gateway) nft 'add table inet reachd_dead; "
                + "add chain inet reachd_dead in { type filter hook input priority 0; }; "
                + "add rule inet reachd_dead in tcp dport \(Self.port) drop'")
        let daemon = try await network.startDaemon(["--metrics-listen", "yes"])
        defer { daemon.signal(SIGTERM) }
        let app = try Self.app(network, to: Self.servers, every: 0.1, timeout: 0.5, seconds: 8)
        try await app.wait(timeout: .seconds(20))
        let said = daemon.errorOutput.split(separator: "\n").filter { $0.contains("connections through this path fail") }
        #expect(said.filter { $0.contains(" info ") }.count == 1, "once at info: \(said)")
        #expect(said.count >= 2, "each suspicion said, the rest at debug: \(said)")
        let metrics = try #require(try await MetricsScrapeTests.fetch("http://127.0.0.1:10077/metrics", in: network))
        #expect((Self.value(of: "reachd_stalls_total{family=\"ipv4\"}", in: metrics) ?? 0) >= 2, "\(metrics)")
        let status = try await network.status().status
        #expect(status.connectivity == .unknown && status.online && status.connectivityReason == nil, "\(status)")
    }

    /// The host closing connections all the time, every one answered: the
    /// kernel's filter drops them all, and the daemon makes no system call.
    @Test(
        .timeLimit(.minutes(1)),
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (make test installs it)"))
    func answeredConnectionsWakeNothing() async throws {
        let (network, check, servers, daemon) = try await Self.online([])
        defer { [daemon, servers].forEach { $0.signal(SIGTERM) } }
        let app = try Self.app(network, to: Self.servers, every: 0.02, seconds: 13)
        defer { app.signal(SIGTERM) }
        _ = try await eventually("the app's connections are answered") { Self.outcomes(app).contains { $0.answered } ? true : nil }
        let calls = try await QuietClientTests.systemCalls(of: daemon.pid, seconds: 10)
        #expect(calls.isEmpty, "system calls while connections close:\n\(calls.joined(separator: "\n"))")
        #expect(Self.outcomes(app).filter(\.answered).count >= 200, "the host closed connections, or this proves nothing")
        #expect(daemon.errorOutput.contains("check.passive=on"), "the watch is on, or this proves nothing")
        withExtendedLifetime(check) {}
    }
}
