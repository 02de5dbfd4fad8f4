import Foundation
import Testing
@testable import Reachability

/// What `reachd status` answers in real network namespaces, computed in-process
/// (no daemon) unless a test starts one. Exit codes follow nm-online.
@Suite("Reachability in network namespaces", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct ReachabilityScenarioTests {
    @Test func loopbackOnlyIsOffline() async throws {
        let network = try await TestNetwork(wired: false)
        let (status, exitCode) = try await network.status(inProcess: true)
        #expect(exitCode == 1)
        #expect(status.reachability == .offline)
        #expect(status.ipv4.reachability == .offline && status.ipv6.reachability == .offline)
        #expect(status.interfaces.map(\.name) == ["lo"])
        #expect(status.interfaces.first?.loopback == true)
        #expect(status.interfaces.first?.addresses.map(\.address) == ["127.0.0.1", "::1"])
        #expect(status.source == .inProcess)
        #expect(status.primary == nil)
    }

    @Test func aLinkUpWithoutAddressesIsNotOnline() async throws {
        let network = try await TestNetwork()
        try await network.inHost("link set vh up")
        // IPv6 link-local appears once DAD completes; IPv4 has nothing at all.
        let status = try await network.waitForStatus(inProcess: true, "IPv6 link-local makes the link local") {
            $0.ipv6.reachability == .local
        }
        #expect(status.ipv4 == FamilyStatus(reachability: .offline, reason: .noRoute, path: nil))
        #expect(!status.online)
        let vh = try #require(status.interfaces.first { $0.name == "vh" })
        #expect(vh.up && vh.carrier)
        #expect(vh.addresses.allSatisfy { $0.scope == "link" })
    }

    @Test func anAddressWithoutADefaultRouteIsLocal() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let (status, exitCode) = try await network.status(inProcess: true)
        #expect(exitCode == 1)
        #expect(status.ipv4 == FamilyStatus(reachability: .local, reason: .noRoute, path: nil))
        #expect(status.reachability == .local)
    }

    @Test func aDefaultRouteIsOnlineAndNamesThePath() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let (status, exitCode) = try await network.status(inProcess: true)
        #expect(exitCode == 0)
        #expect(status.online)
        let vh = try #require(status.interfaces.first { $0.name == "vh" })
        #expect(status.primary == NetworkPath(interface: "vh", index: vh.index, family: .ipv4, gateway: "10.77.0.1", source: "10.77.0.2"))
        #expect(status.ipv6.reachability != .online, "no IPv6 route")

        let human = try await network.reachd("status", "--no-daemon")
        #expect(human.status == 0)
        #expect(human.output.hasPrefix("State: online via vh, gateway 10.77.0.1"))
        #expect(human.output.contains("10.77.0.2/24"))
        #expect(human.output.contains("Source: embedded"), "the human form says where the answer comes from")

        let short = try await network.reachd("status", "--short", "--no-daemon")
        #expect(short.output == "online ipv4=online ipv6=local via vh, gateway 10.77.0.1\n")
    }

    @Test func removingTheDefaultRouteIsNoticed() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        try await network.waitForStatus("online through the daemon") { $0.online && $0.source == .daemon }
        try await network.inHost("route del default")
        let status = try await network.waitForStatus("offline after the route went") { !$0.online }
        #expect(status.ipv4 == FamilyStatus(reachability: .local, reason: .noRoute, path: nil))
        #expect(try await network.status(inProcess: true).status.ipv4 == status.ipv4)
        daemon.signal(SIGTERM)
        #expect(try await daemon.wait() == 0)
    }

    @Test func carrierLostOnTheFarEndIsNotOnlineThoughTheRouteStays() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        try await network.waitForStatus("online") { $0.online }
        try await network.inGateway("link set vg down")
        let status = try await network.waitForStatus("carrier loss noticed") { !$0.online }
        #expect(status.ipv4 == FamilyStatus(reachability: .offline, reason: .noCarrier, path: nil))
        #expect(status.interfaces.first { $0.name == "vh" }?.carrier == false)
        // The kernel keeps the default route, flagged linkdown: a route table alone would say online.
        let routes = try await Subprocess.run(["/usr/bin/env", "ip", "-n", network.host, "route", "show", "default"])
        #expect(routes.output.contains("linkdown"))

        try await network.inGateway("link set vg up")
        try await network.waitForStatus("carrier back") { $0.online }
        _ = daemon
    }

    @Test func anIPv6OnlyDefaultRouteMakesOnlyIPv6Online() async throws {
        let network = try await TestNetwork()
        try await network.inHost("link set vh up", "-6 addr add fd77::2/64 dev vh nodad", "-6 route add default via fd77::1")
        let status = try await network.waitForStatus(inProcess: true, "IPv6 online") { $0.ipv6.reachability == .online }
        #expect(status.ipv4.reachability == .offline)
        #expect(status.online)
        #expect(status.primary?.family == .ipv6)
        #expect(status.primary?.gateway == "fd77::1")
    }

    @Test(arguments: [("unreachable", UnreachableReason.unreachableRoute), ("blackhole", .blackholeRoute), ("prohibit", .prohibitedRoute)])
    func aDefaultRouteThatDropsTrafficIsNotOnline(type: String, reason: UnreachableReason) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        try await network.inHost("route add \(type) default")
        let (status, exitCode) = try await network.status(inProcess: true)
        #expect(exitCode == 1)
        #expect(status.ipv4 == FamilyStatus(reachability: .local, reason: reason, path: nil))
    }

    @Test func policyRulesDecideNotTheMainTable() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        // A rule in front of main sends everything to a table whose default is unreachable.
        try await network.inHost("route add unreachable default table 100", "rule add pref 100 lookup 100")
        let (status, _) = try await network.status(inProcess: true)
        #expect(status.ipv4.reason == .unreachableRoute)
        #expect(!status.online, "a default route in some table is not enough")
        try await network.inHost("rule del pref 100")
        #expect(try await network.status(inProcess: true).status.online)
    }

    @Test func theDaemonAndTheEmbeddedMonitorAgree() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inHost("-6 addr add fd77::2/64 dev vh nodad")
        let daemon = try await network.startDaemon()
        let fromDaemon = try await network.waitForStatus("the daemon sees the IPv6 address") {
            $0.interfaces.contains { $0.addresses.contains { $0.address == "fd77::2" } }
        }
        let embedded = try await network.status(inProcess: true).status
        #expect(fromDaemon.source == .daemon)
        #expect(embedded.source == .inProcess)
        #expect(fromDaemon.describesSameNetwork(as: embedded))
        _ = daemon
    }
}
