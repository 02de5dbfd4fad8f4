#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Reachability

/// One address of an app's destination against the kernel's answer for it.
@Suite("Destination evaluation")
struct DestinationEvaluatorTests {
    static let server = IPAddress("10.8.0.10")!
    /// eth0 (2) with 192.0.2.10; wg0 (3), a VPN with 10.8.0.2.
    static let vpnHost = table(
        address("192.0.2.10", on: 2), link(3, "wg0"), address("10.8.0.2", on: 3, prefix: 24))

    @Test func aVPNRouteInItsOwnTableIsReachableThroughIt() {
        let verdict = DestinationEvaluator.evaluate(
            Self.server, lookup: route(via: nil, on: 3, table: 51820, source: "10.8.0.2"), table: Self.vpnHost)
        #expect(verdict.reason == nil)
        #expect(verdict.via == DestinationPath(
            interface: "wg0", index: 3, family: .ipv4, gateway: nil, table: 51820, source: IPAddress("10.8.0.2")!))
    }

    @Test(arguments: [(ENETUNREACH, UnreachableReason.noRoute), (EHOSTUNREACH, .unreachableRoute),
                      (EINVAL, .blackholeRoute), (EACCES, .prohibitedRoute)])
    func refusedLookups(errno: Int32, reason: UnreachableReason) {
        let verdict = DestinationEvaluator.evaluate(Self.server, lookup: .failed(RouteLookupRefusal(errno: errno)), table: Self.vpnHost)
        #expect(verdict.reason == reason && verdict.via == nil)
    }

    @Test func aBlackholeRouteTypeIsNotReachable() {
        let verdict = DestinationEvaluator.evaluate(
            Self.server, lookup: route(via: nil, on: 3, type: .blackhole, source: "10.8.0.2"), table: Self.vpnHost)
        #expect(verdict.reason == .blackholeRoute)
    }

    @Test func theEgressLinkMustBeUpWithCarrier() {
        let down = table(address("192.0.2.10", on: 2), link(3, "wg0", up: false), address("10.8.0.2", on: 3))
        let noCarrier = table(address("192.0.2.10", on: 2), link(3, "wg0", carrier: false), address("10.8.0.2", on: 3))
        let lookup = route(via: nil, on: 3, source: "10.8.0.2")
        #expect(DestinationEvaluator.evaluate(Self.server, lookup: lookup, table: down).reason == .linkDown)
        #expect(DestinationEvaluator.evaluate(Self.server, lookup: lookup, table: noCarrier).reason == .noCarrier)
        #expect(DestinationEvaluator.evaluate(Self.server, lookup: route(via: nil, on: 9, source: "10.8.0.2"), table: Self.vpnHost)
                .reason == .linkDown, "a link the table does not know yet")
    }

    @Test func theSourceMustReachAsFarAsTheDestination() {
        let v6Host = table(address("fe80::1", on: 2, prefix: 64, scope: .link))
        let global = IPAddress("2001:db8::10")!
        #expect(DestinationEvaluator.evaluate(global, lookup: route(via: "fe80::ff", source: "fe80::1"), table: v6Host)
                .reason == .noUsableAddress, "a link-local source reaches no global address")
        #expect(DestinationEvaluator.evaluate(global, lookup: route(via: "fe80::ff", source: "::1"), table: v6Host)
                .reason == .noUsableAddress, "the kernel's fallback to ::1")
        #expect(DestinationEvaluator.evaluate(global, lookup: route(via: "fe80::ff", source: nil), table: v6Host)
                .reason == .noUsableAddress)
        #expect(DestinationEvaluator.evaluate(IPAddress("fe80::20")!, lookup: route(via: nil, source: "fe80::1"), table: v6Host)
                .reason == nil, "but it serves a link-local destination")
        // A global address on lo (an anycast or service address) serves
        // only this host: the scope rule alone would let it pass.
        let onLoopback = table(address("192.0.2.10", on: 2), address("198.51.100.1", on: 1, prefix: 32))
        #expect(DestinationEvaluator.evaluate(Self.server, lookup: route(via: "192.0.2.1", source: "198.51.100.1"),
                                              table: onLoopback).reason == .noUsableAddress,
                "a source on loopback, for a route out of eth0")
        let tentative = table(address("2001:db8::2", on: 2, prefix: 64, tentative: true))
        #expect(DestinationEvaluator.evaluate(global, lookup: route(via: nil, source: "2001:db8::2"), table: tentative)
                .reason == .noUsableAddress, "not while duplicate address detection runs")
    }

    @Test func anIPv4RouteOutOfALinkWithoutIPv4IsNotCounted() {
        // wg0 has no address; the kernel would borrow eth0's as the source.
        let unnumbered = table(address("192.0.2.10", on: 2), link(3, "wg0"))
        #expect(DestinationEvaluator.evaluate(Self.server, lookup: route(via: nil, on: 3, source: "192.0.2.10"), table: unnumbered)
                .reason == .noUsableAddress)
    }

    @Test func theHostItselfIsReachableThroughLoopback() {
        let verdict = DestinationEvaluator.evaluate(
            IPAddress("127.0.0.1")!, lookup: route(via: nil, on: 1, type: .local, table: 255, source: "127.0.0.1"),
            table: Self.vpnHost)
        #expect(verdict.reason == nil && verdict.via?.interface == "lo" && verdict.via?.table == 255)
    }
}
