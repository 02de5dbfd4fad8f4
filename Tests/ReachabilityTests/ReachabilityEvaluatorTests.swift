#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Reachability

@Suite("What counts as online, local and offline")
struct ReachabilityEvaluatorTests {
    @Test func aUnicastRouteOnALinkWithCarrierAndAGlobalAddressIsOnline() {
        let status = ReachabilityEvaluator.evaluate(
            .ipv4, table: table(address("192.0.2.10", on: 2)), lookup: route(via: "192.0.2.1"))
        #expect(status == FamilyStatus(
            reachability: .online, reason: nil,
            path: NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1")))
    }

    @Test func anOnLinkRouteHasNoGateway() {
        let status = ReachabilityEvaluator.evaluate(
            .ipv4, table: table(address("192.0.2.10", on: 2)), lookup: route(via: nil))
        #expect(status.reachability == .online)
        #expect(status.path?.gateway == nil)
    }

    @Test func anAddressWithoutARouteIsLocal() {
        let status = ReachabilityEvaluator.evaluate(.ipv4, table: table(address("192.0.2.10", on: 2)), lookup: noRoute)
        #expect(status == FamilyStatus(reachability: .local, reason: .noRoute, path: nil))
    }

    @Test func loopbackAloneIsOffline() {
        let loopbackOnly = InterfaceTable(replaying: [
            link(1, "lo", loopback: true), address("127.0.0.1", on: 1, prefix: 8, scope: .host),
        ])
        for family in AddressFamily.allCases {
            #expect(ReachabilityEvaluator.evaluate(family, table: loopbackOnly, lookup: noRoute).reachability == .offline)
        }
    }

    @Test func aGlobalAddressOnLoopbackNeverCounts() {
        // Anycast service addresses on lo are common on routers; they make no uplink.
        let table = table(address("198.51.100.7", on: 1, prefix: 32))
        let status = ReachabilityEvaluator.evaluate(.ipv4, table: table, lookup: route(via: "192.0.2.1"))
        #expect(status == FamilyStatus(reachability: .offline, reason: .noUsableAddress, path: nil))
    }

    @Test func aRouteOnALinkThatLostCarrierIsNotReachability() {
        // The kernel keeps the route (flagged linkdown) and still returns it from a lookup.
        let status = ReachabilityEvaluator.evaluate(
            .ipv4, table: table(carrier: false, address("192.0.2.10", on: 2)), lookup: route(via: "192.0.2.1"))
        #expect(status == FamilyStatus(reachability: .offline, reason: .noCarrier, path: nil))
    }

    @Test func aRouteOnAnAdministrativelyDownLinkIsNotReachability() {
        let status = ReachabilityEvaluator.evaluate(
            .ipv4, table: table(eth0: false, address("192.0.2.10", on: 2)), lookup: route(via: "192.0.2.1"))
        #expect(status.reason == .linkDown)
        #expect(status.reachability == .offline)
    }

    @Test func aRouteThroughLoopbackIsNotReachability() {
        let status = ReachabilityEvaluator.evaluate(
            .ipv4, table: table(address("192.0.2.10", on: 2)), lookup: route(via: nil, on: 1))
        #expect(status == FamilyStatus(reachability: .local, reason: .loopbackRoute, path: nil))
    }

    @Test func aRouteThroughALinkNotYetKnownIsNotTrusted() {
        let status = ReachabilityEvaluator.evaluate(
            .ipv4, table: table(address("192.0.2.10", on: 2)), lookup: route(via: "192.0.2.1", on: 9))
        #expect(status.reachability == .local)
    }

    @Test(arguments: [
        (EHOSTUNREACH, UnreachableReason.unreachableRoute),
        (EINVAL, .blackholeRoute),
        (EACCES, .prohibitedRoute),
        (ENETUNREACH, .noRoute),
        (EIO, .unusableRoute),
    ])
    func refusedLookupsAreNotOnline(errno: Int32, reason: UnreachableReason) {
        let status = ReachabilityEvaluator.evaluate(
            .ipv4, table: table(address("192.0.2.10", on: 2)), lookup: .failed(RouteLookupRefusal(errno: errno)))
        #expect(status == FamilyStatus(reachability: .local, reason: reason, path: nil))
    }

    /// The kernel's numbers: 2 local, 6 blackhole, 7 unreachable, 8 prohibit,
    /// 10 NAT (no name here), 42 (none yet).
    @Test(arguments: [(UInt8(2), UnreachableReason.unusableRoute), (6, .blackholeRoute), (7, .unreachableRoute),
                      (8, .prohibitedRoute), (10, .unusableRoute), (42, .unusableRoute)])
    func nonUnicastRoutesAreNotOnline(type: UInt8, reason: UnreachableReason) {
        let status = ReachabilityEvaluator.evaluate(
            .ipv4, table: table(address("192.0.2.10", on: 2)), lookup: route(via: nil, type: RouteType(kernelValue: type)))
        #expect(status.reason == reason)
        #expect(status.reachability == .local)
    }

    @Test func tentativeAndDADFailedAddressesAreNotUsable() {
        for unusable in [address("2001:db8::10", on: 2, prefix: 64, tentative: true),
                         address("2001:db8::10", on: 2, prefix: 64, dadFailed: true)] {
            let status = ReachabilityEvaluator.evaluate(.ipv6, table: table(unusable), lookup: route(via: "fe80::1"))
            #expect(status == FamilyStatus(reachability: .offline, reason: .noUsableAddress, path: nil))
        }
    }

    @Test func ipv6LinkLocalCountsForLocalButNotForOnline() {
        let linkLocalOnly = table(address("fe80::1234", on: 2, prefix: 64, scope: .link))
        let status = ReachabilityEvaluator.evaluate(.ipv6, table: linkLocalOnly, lookup: route(via: "fe80::1"))
        #expect(status == FamilyStatus(reachability: .local, reason: .noUsableAddress, path: nil))
    }

    @Test func anAddressOnALinkWithoutCarrierIsNotEvenLocal() {
        let status = ReachabilityEvaluator.evaluate(
            .ipv4, table: table(carrier: false, address("192.0.2.10", on: 2)), lookup: noRoute)
        #expect(status.reachability == .offline)
    }

    @Test func interfacesAreListedInIndexOrderWithSortedAddresses() {
        let table = table(
            address("fe80::1", on: 2, prefix: 64, scope: .link), address("192.0.2.10", on: 2),
            address("10.0.0.1", on: 2, prefix: 8))
        let interfaces = ReachabilityEvaluator.interfaces(in: table)
        #expect(interfaces.map(\.name) == ["lo", "eth0"])
        #expect(interfaces[0].loopback && !interfaces[1].loopback)
        #expect(interfaces[1].addresses.map(\.address) == ["10.0.0.1", "192.0.2.10", "fe80::1"])
        #expect(interfaces[1].addresses.map(\.scope) == ["global", "global", "link"])
    }
}
