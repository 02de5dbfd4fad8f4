import Foundation
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// ReachabilityMonitor in network namespaces, through `reachd monitor --json`,
/// which is a ReachabilityMonitor(.automatic) printing every status it delivers.
@Suite("ReachabilityMonitor in network namespaces", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct ReachabilityMonitorTests {
    @Test func withoutADaemonItFollowsNetlinkInProcess() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let monitor = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        let first = try await eventually("a first status") { monitor.statuses.first }
        #expect(first.source == .inProcess)
        #expect(monitor.errorOutput.contains("following netlink in-process"))
        try await network.inHost("route add default via 10.77.0.1")
        let online = try await eventually("the change, in-process") { monitor.statuses.last { $0.online } }
        #expect(online.source == .inProcess)
    }

    @Test func aDaemonRestartIsFollowedAndAChangeMadeMeanwhileIsDelivered() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        var daemon = try await network.startDaemon()
        let monitor = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        let before = try await eventually("the daemon's first status") { monitor.statuses.first { $0.source == .daemon } }

        daemon.signal(SIGTERM)
        try await daemon.wait()
        // While the daemon is away the monitor does not go blind: it follows netlink itself.
        try await network.inHost("route add default via 10.77.0.1")
        let meanwhile = try await eventually("the change while the daemon is away") {
            monitor.statuses.last { $0.source == .inProcess && $0.online }
        }
        #expect(meanwhile.primary?.interface == "vh")

        daemon = try await network.startDaemon()
        let back = try await eventually("the daemon again, with the current state", timeout: .seconds(15)) {
            monitor.statuses.last { $0.source == .daemon && $0.online }
        }
        #expect(back.seq > before.seq, "a new daemon, resubscribed, and seq did not go backwards")
        #expect(monitor.errorOutput.contains("following the daemon again"))
        _ = daemon
    }

    /// A handover while the daemon restarts reaches the app once: as a
    /// `.daemon` monitor's resubscription, whose first status the session
    /// compares with what it delivered, and as an `.automatic` monitor's
    /// in-process status meanwhile, the daemon's return then being no
    /// change.
    @Test(arguments: [ReachabilityMonitor.Source.daemon, .automatic])
    func aHandoverWhileTheDaemonRestartsIsOnePathChange(source: ReachabilityMonitor.Source) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        var daemon = try await network.startDaemon()
        let socket = network.socketPath
        let monitor = try await network.onThreadInHost { ReachabilityMonitor(source: source, socketPath: socket) }
        #expect(try await monitor.firstStatus().source == .daemon)
        let changes = HandoverTests.PathChanges(monitor)
        daemon.signal(SIGTERM)
        try await daemon.wait()
        try await network.inHost("route replace default via 10.77.0.254")
        if source == .automatic {
            _ = try await eventually("in-process, the handover") { monitor.currentStatus?.ipv4.path?.gateway == "10.77.0.254" ? true : nil }
        }
        daemon = try await network.startDaemon()
        _ = try await eventually("the daemon followed again") { monitor.currentStatus?.source == .daemon ? true : nil }
        _ = try await eventually("the handover delivered") { changes.count > 0 ? true : nil }
        #expect(try await holdsThroughout(.milliseconds(300)) { changes.count == 1 }, "one change: \(changes.seen)")
        #expect(changes.seen == ["ipv4 path vh via 10.77.0.1 from 10.77.0.2 → vh via 10.77.0.254 from 10.77.0.2"])
        #expect(monitor.currentStatus?.ipv4.path?.gateway == "10.77.0.254")
        changes.task.cancel()
        monitor.cancel()
        _ = daemon
    }

    @Test func aDaemonThatStartsLaterTakesOver() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let monitor = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        _ = try await eventually("in-process first") { monitor.statuses.first { $0.source == .inProcess } }
        let daemon = try await network.startDaemon()
        let fromDaemon = try await eventually("the daemon once it answers", timeout: .seconds(15)) {
            monitor.statuses.last { $0.source == .daemon }
        }
        #expect(fromDaemon.online)
        _ = daemon
    }
}
