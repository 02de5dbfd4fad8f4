#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Reachability

/// Replays a session recorded from a real kernel (Fixtures/veth-lifecycle.netlink)
/// through the reducer and the evaluator, step by step. Route lookups are not in
/// the event stream; each step states what the kernel's lookup answered then.
@Suite("A recorded veth session, replayed")
struct RecordedSessionTests {
    @Test func reachabilityFollowsTheSession() throws {
        let fixture = try NetlinkFixture("veth-lifecycle")
        var table = InterfaceTable()
        var vhIndex = 0
        func ipv4(_ lookup: RouteLookupResult) -> FamilyStatus {
            ReachabilityEvaluator.evaluate(.ipv4, table: table, lookup: lookup)
        }
        func ipv6(_ lookup: RouteLookupResult) -> FamilyStatus {
            ReachabilityEvaluator.evaluate(.ipv6, table: table, lookup: lookup)
        }
        func replay(_ step: String) throws {
            for event in try fixture.step(step).events { table.apply(event) }
            vhIndex = table.links.values.first { $0.name == "vh" }?.index ?? vhIndex
        }
        let viaGateway = { route(via: "10.77.0.1", on: vhIndex) }

        try replay("ip link set lo up")
        #expect(ipv4(noRoute).reachability == .offline, "loopback only")
        #expect(ipv6(noRoute).reachability == .offline)

        try replay("veth vh moved")
        #expect(ipv4(noRoute).reachability == .offline, "a link that is down")

        try replay("ip link set vh up")
        #expect(ipv4(noRoute) == FamilyStatus(reachability: .offline, reason: .noRoute, path: nil))
        #expect(ipv6(noRoute) == FamilyStatus(reachability: .local, reason: .noRoute, path: nil),
                "IPv6 link-local makes the link local once DAD completes")

        try replay("ip addr add 10.77.0.2/24")
        #expect(ipv4(noRoute) == FamilyStatus(reachability: .local, reason: .noRoute, path: nil))

        try replay("ip route add default")
        #expect(ipv4(viaGateway()) == FamilyStatus(
            reachability: .online, reason: nil,
            path: NetworkPath(interface: "vh", index: vhIndex, family: .ipv4, gateway: "10.77.0.1")))

        try replay("gateway side: ip link set vg down")
        // Same lookup answer as before: the kernel keeps the route. Only the link event tells.
        #expect(ipv4(viaGateway()) == FamilyStatus(reachability: .offline, reason: .noCarrier, path: nil))

        try replay("gateway side: ip link set vg up")
        #expect(ipv4(viaGateway()).reachability == .online)

        try replay("ip route del default")
        #expect(ipv4(noRoute).reachability == .local)

        try replay("ip -6 addr add 2001:db8:77::2/64")
        #expect(ipv6(route(via: "fe80::1", on: vhIndex)).reachability == .online)

        try replay("ip link del vh")
        #expect(table.links.values.map(\.name) == ["lo"])
        #expect(ipv4(noRoute).reachability == .offline)
    }

    @Test func aTentativeGlobalAddressDoesNotMakeTheFamilyOnline() throws {
        let fixture = try NetlinkFixture("veth-lifecycle")
        var table = InterfaceTable()
        let upTo = try #require(fixture.steps.firstIndex { $0.description.hasPrefix("ip -6 addr add") })
        for step in fixture.steps[..<upTo] { for event in step.events { table.apply(event) } }
        let vh = try #require(table.links.values.first { $0.name == "vh" })
        let viaRouter = route(via: "fe80::1", on: vh.index)
        var seen: [ReachabilityLevel] = []
        for event in fixture.steps[upTo].events where table.apply(event) {
            let status = ReachabilityEvaluator.evaluate(.ipv6, table: table, lookup: viaRouter)
            if seen.last != status.reachability { seen.append(status.reachability) }
        }
        // Link-local made IPv6 local; the global address counts once DAD clears it.
        #expect(seen == [.local, .online])
    }
}
