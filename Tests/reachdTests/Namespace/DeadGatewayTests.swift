import Foundation
import Testing
import TestSupport
@testable import Reachability

/// A gateway that stops answering while the link keeps its carrier and
/// every route stays (a dead upstream box, a switch in between): noticed
/// from the kernel's neighbour table, with no probe due and no check asked
/// for, and for free while all is well.
@Suite("A dead gateway", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct DeadGatewayTests {
    /// An app's traffic to `address`, from the host namespace: a UDP
    /// datagram every 200 ms, which makes the kernel resolve the gateway
    /// (and confirms nothing, as a dead server's silence confirms nothing).
    static func traffic(_ network: TestNetwork, to address: String, seconds: Int) throws -> Subprocess {
        try Subprocess(network.inHost(etc: nil) + ["/usr/bin/python3", "-c", """
            import socket, time
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            end = time.time() + \(seconds)
            while time.time() < end:
                try: s.sendto(b"x", ("\(address)", 9))
                except OSError: pass
                time.sleep(0.2)
            """])
    }

    /// The host's neighbour entries as `ip -ts monitor neigh` prints them,
    /// each line with when the kernel told it.
    static func neighbourMonitor(_ network: TestNetwork) throws -> Subprocess {
        try Subprocess(["/usr/bin/env", "ip", "-n", network.host, "-ts", "monitor", "neigh"])
    }

    /// A host online through the gateway, the check's server on it, the
    /// daemon with the check on and finding `full`, and `ip monitor neigh`
    /// listening from then on.
    static func onlineWithTheCheck() async throws
        -> (network: TestNetwork, server: CheckServer, daemon: Subprocess, kernel: Subprocess)
    {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let server = try await CheckServer(in: network, answering: .init(status: 204))
        let daemon = try await network.startDaemon(["--check-url", server.url])
        try await network.waitForStatus("full") { $0.connectivity == .full }
        return (network, server, daemon, try Self.neighbourMonitor(network))
    }

    /// The states the gateway's entry went through, as the monitor printed
    /// them, each with when the kernel told it.
    static func states(_ monitor: Subprocess) -> [(state: String, at: Date)] {
        monitor.outputLines.compactMap { line in
            let words = line.split(separator: " ")
            guard words.count > 2, words[1] == "10.77.0.1", let at = KernelRouteMonitor.timestamp(line) else { return nil }
            return (String(words[words.count - 1]), at)
        }
    }

    /// The gateway's address goes from under the link, as an upstream box
    /// that died: an app's traffic makes the kernel find it dead (`FAILED`,
    /// its own three probes unanswered), and the daemon, told at once, says
    /// `limited` with no probe due and no check asked for. The gateway
    /// back 20 s later, the app's traffic finds it (`REACHABLE`) and the
    /// daemon checks at once: `full` within 5 s. Before, `full` stood for
    /// the check's 300 s, and a return after the first retry waited for
    /// the next.
    ///
    /// The entry starts stale, as an idle one is 15 to 45 s after its last
    /// confirmation: the kernel then finds the gateway dead after its 5 s
    /// delay and 3 s of probes. A fresh one is believed for up to 45 s
    /// first (`make bench` times both).
    @Test(.timeLimit(.minutes(2)))
    func aGatewayThatStopsAnsweringLeavesFullAsTheKernelFindsItAndComesBack() async throws {
        let (network, server, daemon, kernel) = try await Self.onlineWithTheCheck()
        defer { [daemon, kernel].forEach { $0.signal(SIGTERM) } }

        try await network.inHost("neigh change 10.77.0.1 dev vh nud stale")
        try await network.inGateway("addr del 10.77.0.1/24 dev vg")
        // Long enough to find the gateway's return after the 20 s below.
        let app = try Self.traffic(network, to: "10.77.0.1", seconds: 90)
        defer { app.signal(SIGTERM) }
        let dead = try await network.waitForStatus(timeout: .seconds(20), "connectivity leaves full") { $0.connectivity != .full }
        #expect(dead.connectivity == .limited && !dead.online && dead.connectivityReason == .gatewayUnanswered, "\(dead)")
        #expect(daemon.errorOutput.contains("the gateway stopped answering address resolution"), "\(daemon.errorOutput.suffix(2000))")
        // The clock starts at the kernel's verdict: its 5 s delay and 3 s of
        // probes are the kernel's, and a loaded machine stretches them.
        // The kernel's own timing runs from its first probe (5 s after the
        // app's first packet; `ip monitor` does not tell DELAY), not from
        // before the app's start: 3 probes a second apart.
        let states = Self.states(kernel)
        let failed = try #require(states.first { $0.state == "FAILED" }, "\(kernel.outputLines)")
        let probing = try #require(states.first { $0.state == "PROBE" }, "\(kernel.outputLines)")
        #expect(failed.at.timeIntervalSince(probing.at) < 6, "the kernel's own probes: \(failed.at.timeIntervalSince(probing.at)) s")
        #expect(dead.changedAt.timeIntervalSince(failed.at) < 1, "told at once: \(dead.changedAt.timeIntervalSince(failed.at)) s after the kernel")

        // Back 20 s after it was found dead, past the schedule's first
        // probes (5 s, then 10 s later): its return is still news.
        try await Task.sleep(until: .now + .seconds(20))
        #expect(try await network.status().status.connectivity == .limited)
        try await network.inGateway("addr add 10.77.0.1/24 dev vg")
        let back = Date()
        let full = try await network.waitForStatus(timeout: .seconds(15), "full again") { $0.connectivity == .full }
        #expect(full.changedAt.timeIntervalSince(back) < 5, "\(full.changedAt.timeIntervalSince(back)) s")
        // Told by the kernel, not found by the retry schedule.
        #expect(daemon.errorOutput.contains("the gateway answers address resolution again"), "\(daemon.errorOutput.suffix(2000))")
        withExtendedLifetime(server) {}
    }

    /// The kernel finds the gateway dead and, at the app's next packet,
    /// alive again, before the daemon has read the first: the second
    /// notification comes while the daemon's filter still drops
    /// `REACHABLE` (it lets it through only once a gateway is found dead).
    /// The daemon asks for the entry as it lets `REACHABLE` through, and
    /// probes at once. Before, it said `limited` until its 5 s retry (a CI
    /// run's systemd check saw just that), and never told the return.
    /// The stopped daemon makes the two notifications come first, every time.
    @Test(.timeLimit(.minutes(1)))
    func aGatewayBackBeforeTheDaemonReadsItsDeathIsToldToo() async throws {
        let (network, server, daemon, kernel) = try await Self.onlineWithTheCheck()
        defer { [daemon, kernel].forEach { $0.signal(SIGCONT); $0.signal(SIGTERM) } }
        let link = try await Subprocess.run(["/usr/bin/env", "ip", "-n", network.gateway, "-br", "link", "show", "vg"])
        let mac = try #require(link.output.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first,
                               "vg's address: \(link)")

        daemon.signal(SIGSTOP)
        try await network.inHost(
            "neigh replace 10.77.0.1 dev vh lladdr 02:00:00:00:de:ad nud failed",
            "neigh replace 10.77.0.1 dev vh lladdr \(mac) nud reachable")
        _ = try await eventually("the kernel told both", timeout: .seconds(5)) {
            Self.states(kernel).map(\.state).suffix(2) == ["FAILED", "REACHABLE"] ? true : nil
        }
        daemon.signal(SIGCONT)

        // The verdicts as the daemon logged them: limited, then full.
        _ = try await eventually("full after limited", timeout: .seconds(15)) {
            let verdicts = daemon.errorOutput.split(separator: "\n").compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("check.verdict=") }
            }
            return verdicts.suffix(2) == ["check.verdict=limited", "check.verdict=full"]
                || verdicts.suffix(3) == ["check.verdict=limited", "check.verdict=probing", "check.verdict=full"]
                ? true : nil
        }
        #expect(daemon.errorOutput.contains("the gateway stopped answering address resolution"), "\(daemon.errorOutput.suffix(2000))")
        // Told by the kernel's entry, not found by the retry schedule.
        #expect(daemon.errorOutput.contains("the gateway answers address resolution again"), "\(daemon.errorOutput.suffix(2000))")
        withExtendedLifetime(server) {}
    }

    /// The neighbour watch costs nothing while all is well: the gateway's
    /// entry goes stale, is probed and confirmed again (what a working
    /// link does all the time), and the daemon, online with the check on,
    /// makes no system call over 10 s.
    @Test(
        .timeLimit(.minutes(1)),
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (make test installs it)"))
    func neighbourChurnOnAWorkingLinkWakesNothing() async throws {
        let (network, server, daemon, kernel) = try await Self.onlineWithTheCheck()
        defer { [daemon, kernel].forEach { $0.signal(SIGTERM) } }
        try await network.inHost("neigh change 10.77.0.1 dev vh nud stale")
        let app = try Self.traffic(network, to: "10.77.0.1", seconds: 12)
        defer { app.signal(SIGTERM) }
        let calls = try await QuietClientTests.systemCalls(of: daemon.pid, seconds: 10)
        #expect(calls.isEmpty, "system calls while idle:\n\(calls.joined(separator: "\n"))")
        let seen = Self.states(kernel).map(\.state)
        #expect(seen.contains("PROBE") && seen.contains("REACHABLE"), "the kernel's entry moved, or this proves nothing: \(seen)")
        #expect(daemon.errorOutput.contains("check.url="), "the check is on")
        #expect(!daemon.errorOutput.contains("cannot watch the gateways"), "the watch is on, or this proves nothing")
        withExtendedLifetime(server) {}
    }
}
