import Foundation
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// A daemon stopped (SIGSTOP) after its clients subscribed: its kernel still
/// holds their connections, so only its silence tells. While the kernel reports
/// changes, clients notice within 1.5 s, follow netlink meanwhile, say why, and
/// return to the daemon when it answers.
@Suite("A daemon that stops answering", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct StoppedDaemonTests {
    @Test func monitorNoticesAStoppedDaemonFollowsNetlinkAndReturnsToIt() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        let monitor = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        _ = try await eventually("the daemon's first status") { monitor.statuses.first { $0.source == .daemon && $0.online } }

        daemon.signal(SIGSTOP)
        let changed = ContinuousClock.now
        try await network.inHost("route del default")
        let offline = try await eventually("the change, in-process", timeout: .seconds(5)) {
            monitor.statuses.last { $0.source == .inProcess && !$0.online }
        }
        let noticed = ContinuousClock.now - changed
        #expect(offline.ipv4.reason == .noRoute)
        #expect(monitor.errorOutput.contains("did not answer within 1 s"), "says why: \(monitor.errorOutput)")
        #expect(monitor.errorOutput.contains("following the network in-process meanwhile"), "\(monitor.errorOutput)")
        print("a stopped daemon was noticed, and the change shown, \(noticed) after the route was deleted")

        daemon.signal(SIGCONT)
        let back = try await eventually("the daemon again") { () -> NetworkStatus? in
            let all = monitor.statuses
            guard let inProcess = all.lastIndex(where: { $0.source == .inProcess }) else { return nil }
            return all[inProcess...].first { $0.source == .daemon }
        }
        #expect(!back.online, "the daemon's state now, not the one before it stopped")
        #expect(monitor.errorOutput.contains("following the daemon again"), "\(monitor.errorOutput)")
        try await network.inHost("route add default via 10.77.0.1")
        _ = try await eventually("a change through the daemon") { monitor.statuses.last { $0.source == .daemon && $0.online } }
        #expect(daemon.isRunning)
        // The daemon numbers from its own start, before the monitor's
        // in-process numbers: renumbered, so that a client dropping a lower
        // `seq` as stale, as PROTOCOL.md allows, drops nothing here.
        let numbers = monitor.statuses.map(\.seq)
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }, "over the fallback and back: \(numbers)")
    }

    /// The text monitor over a stop and back, with no change meanwhile:
    /// the fallback is told once, in one line that says why, and nothing
    /// else is printed until something changes. Before, the session's
    /// warning and the command's line both told it, and each source's
    /// first status printed the same state again, the daemon's with the
    /// time of its last change, before the line computed in-process.
    @Test func theTextMonitorTellsAFallbackOnceAndItsTimesNeverGoBack() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        let monitor = try network.startReachd(defaultSocket: network.socketPath, "monitor")
        defer { monitor.signal(SIGTERM) }
        _ = try await eventually("the first line") { monitor.outputLines.first }

        daemon.signal(SIGSTOP)
        // A change the kernel reports that moves no status: the client asks
        // the daemon whether it is there, and hears nothing.
        try await network.inHost("route add 10.99.0.0/24 via 10.77.0.1 table 200")
        _ = try await eventually("the fallback", timeout: .seconds(5)) {
            monitor.errorOutput.contains("in-process") ? true : nil
        }
        daemon.signal(SIGCONT)
        _ = try await eventually("the daemon again", timeout: .seconds(10)) {
            monitor.errorOutput.contains("following the daemon again") ? true : nil
        }
        try await network.inHost("route del default")
        _ = try await eventually("the change") { monitor.outputLines.last { $0.contains("IPv4 online → local") } }

        let told = monitor.errorOutput.split(separator: "\n")
        #expect(told.count == 2 && told[0].hasPrefix("reachd: the reachd daemon at ")
                && told[0].hasSuffix("did not answer within 1 s (stopped or overloaded); following the network in-process meanwhile"),
                "once, with why: \(told)")
        let lines = monitor.outputLines
        #expect(lines.count == 2, "the first status and the change, nothing between: \(lines)")
        let times = lines.map { $0.prefix(24) }
        #expect(times == times.sorted(), "times never go back: \(lines)")
    }

    @Test func waitOnlineIsNotHeldByAStoppedDaemon() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        let descriptors = { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd").count) ?? 0 }
        // The harness's own probe connection may still be closing: the same count twice, 100 ms apart.
        var before = -1
        _ = try await eventually("the daemon's descriptors settle", every: .milliseconds(100)) { () -> Bool? in
            let now = descriptors()
            defer { before = now }
            return now == before ? true : nil
        }
        let waiter = try network.startReachd(defaultSocket: network.socketPath, "wait-online", "-t", "20")
        _ = try await eventually("wait-online subscribed: one more descriptor in the daemon") {
            descriptors() > before ? true : nil
        }
        daemon.signal(SIGSTOP)
        try await network.inHost("route add default via 10.77.0.1")
        #expect(try await waiter.wait(timeout: .seconds(5)) == 0, "online in-process: \(waiter.errorOutput)")
        #expect(waiter.output.contains("online: IPv4 via vh"), "\(waiter.output)")
    }

    /// `reach` asks the daemon for a status before its destinations: a
    /// stopped daemon, which accepts connections but answers nothing, costs
    /// the one-second timeout, not the resolver's allowance, and the answer
    /// is computed in-process.
    @Test func reachIsNotHeldByAStoppedDaemon() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        daemon.signal(SIGSTOP)
        let reach = try await network.reachd(defaultSocket: network.socketPath, "reach", "10.77.0.1", timeout: .seconds(5))
        #expect(reach.status == 0 && reach.output == "10.77.0.1:443 reachable via vh\n", "\(reach)")
        #expect(reach.error.contains("computed in-process") && reach.error.contains("did not answer within 1 s"),
                "\(reach.error)")
    }

    /// A daemon stopped after it answered a watch: the watch notices when
    /// the kernel reports a change the daemon should have published, goes on
    /// in-process, and back to the daemon once it resumes.
    @Test func aWatchNoticesADaemonStoppedAfterItAnsweredAndReturnsToIt() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        let watch = try network.startReachd(defaultSocket: network.socketPath, ["reach", "--watch", "--json", "10.99.1.1"])
        let first = try await eventually("the daemon's answer") { watch.outputLines.first }
        #expect(first.contains(#""state":"reachable""#) && first.contains(#""source":"daemon""#), "\(first)")
        daemon.signal(SIGSTOP)
        try await network.inHost("route add blackhole 10.99.0.0/16")
        let inProcess = try await eventually("the blackhole, computed in-process", timeout: .seconds(10)) {
            watch.outputLines.last { $0.contains(#""reason":"blackhole_route""#) }
        }
        #expect(inProcess.contains(#""source":"embedded""#), "\(inProcess)")
        daemon.signal(SIGCONT)
        let resumed = try await eventually("the daemon's answer once it resumed", timeout: .seconds(15)) {
            watch.outputLines.last { $0.contains(#""reason":"blackhole_route""#) && $0.contains(#""source":"daemon""#) }
        }
        #expect(watch.isRunning, "\(watch.errorOutput) \(resumed)")
        watch.signal(SIGTERM)
    }

    /// The daemon `--socket` named stops answering (SIGSTOP) or dies
    /// (SIGKILL): `monitor`, `reach --watch` and `wait-online` say so on
    /// stderr and exit 2, as the README promises for `--socket`, rather than
    /// go on showing a state nobody keeps current (or, for wait-online,
    /// blame the network after its timeout).
    @Test(arguments: [
        ["monitor"], ["reach", "--watch", "10.99.1.1"], ["wait-online", "-t", "20", "--host", "10.98.1.1"],
        // The route out, through an interface there is none through: the network, waited for.
        ["wait-online", "-t", "20", "--ignore", "vh"],
    ],
          [SIGSTOP, SIGKILL])
    func aNamedDaemonThatStopsAnsweringEndsTheCommand(command: [String], signal: Int32) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inHost("route add blackhole 10.98.0.0/16")
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        let client = try Subprocess(["/usr/bin/env", "ip", "netns", "exec", network.host, Reachd.binary] + command + ["--socket", network.socketPath])
        // wait-online prints nothing until it is done: its connection tells.
        _ = try await eventually("the client connected") {
            try await network.connections(to: network.socketPath) > 0 ? true : nil
        }
        try await Task.sleep(for: .milliseconds(300))
        daemon.signal(signal)
        // A stopped daemon is noticed when the kernel reports a change it
        // should have published; a dead one at once.
        if signal == SIGSTOP { try await network.inHost("route del default") }
        let noticed = ContinuousClock.now
        #expect(try await client.wait(timeout: .seconds(5)) == 2, "\(client.errorOutput)")
        #expect(ContinuousClock.now - noticed < .seconds(2))
        let why = signal == SIGSTOP ? "did not answer within 1 s (stopped or overloaded)" : "closed the connection"
        #expect(client.errorOutput.contains(why), "\(client.errorOutput)")
        #expect(client.errorOutput.contains("leave out --socket"), "what to do: \(client.errorOutput)")
        #expect(!client.errorOutput.contains("start one with"), "it ran: \(client.errorOutput)")
    }

    /// The library itself: a `.daemon` monitor in this process, on a
    /// thread in the daemon's network, whose sentinel hears a veth pair
    /// coming and going there: the kernel's report.
    @Test func theLibrarysLastErrorSaysTheDaemonStoppedAnswering() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        let socket = network.socketPath
        let monitor = try await network.onThreadInHost { ReachabilityMonitor(source: .daemon, socketPath: socket) }
        defer { monitor.cancel() }
        _ = try await monitor.firstStatus()
        daemon.signal(SIGSTOP)
        try await network.inHost("link add rdls0a type veth peer name rdls0b", "link del rdls0a")
        let error = try await eventually("lastError", timeout: .seconds(5)) { () -> DaemonClientError? in
            guard case .noDaemonAnswered(let failures)? = monitor.lastError, case .timedOut? = failures.last else {
                return nil
            }
            return failures.last
        }
        #expect("\(error)".contains("did not answer within 1 s"))
    }
}
