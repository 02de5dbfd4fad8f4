#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Reachability

@Suite("Decoding recorded rtnetlink messages")
struct NetlinkDecoderTests {
    let lifecycle: NetlinkFixture

    init() throws {
        lifecycle = try NetlinkFixture("veth-lifecycle")
    }

    @Test func loopbackComingUpIsALinkAndItsAddresses() throws {
        let events = try lifecycle.step("ip link set lo up").events
        let links = events.compactMap { if case .linkChanged(let link) = $0 { link } else { nil } }
        let lo = try #require(links.first)
        #expect(lo.index == 1)
        #expect(lo.name == "lo")
        #expect(lo.isUp && lo.isLoopback)
        let addresses = events.compactMap { if case .addressChanged(let a) = $0 { a } else { nil } }
        #expect(Set(addresses.map(\.address.description)) == ["127.0.0.1", "::1"])
        #expect(addresses.allSatisfy { $0.scope.name == "host" })
        // Adding 127.0.0.1 also adds local and broadcast routes to table local.
        #expect(events.contains(.routesChanged(RoutePrefix(address: IPAddress("127.0.0.0")!, length: 8))), "\(events)")
    }

    @Test func aVethWithoutPeerCarrierIsDownAndHasNoCarrier() throws {
        let events = try lifecycle.step("veth vh moved").events
        guard case .linkChanged(let vh) = try #require(events.first) else {
            Issue.record("expected a link, got \(events)")
            return
        }
        #expect(vh.name == "vh")
        #expect(!vh.isUp && !vh.hasCarrier && !vh.isLoopback)
        #expect(vh.operationalState.name == "down")
        #expect(vh.kind == "veth" && vh.hardwareType == 1, "made through rtnetlink, an Ethernet-like link")
    }

    @Test func loopbackHasItsOwnHardwareTypeAndNoKind() throws {
        let events = try lifecycle.step("ip link set lo up").events
        let lo = try #require(Self.link(events.first), "expected a link first, got \(events)")
        #expect(lo.hardwareType == 772 && lo.kind == nil, "ARPHRD_LOOPBACK")
    }

    @Test func theKernelAnnouncesAutomaticLinkLocalOnlyAfterDuplicateAddressDetection() throws {
        let events = try lifecycle.step("ip link set vh up").events
        let linkLocal = events.compactMap { event -> AddressRecord? in
            guard case .addressChanged(let address) = event, address.scope == .link else { return nil }
            return address
        }
        #expect(linkLocal.count == 1)
        #expect(linkLocal.first?.isTentative == false)
        #expect(linkLocal.first?.address.description.hasPrefix("fe80::") == true)
    }

    @Test func aManuallyAddedIPv6AddressIsAnnouncedTentativeThenUsable() throws {
        let events = try lifecycle.step("ip -6 addr add 2001:db8:77::2/64").events
        let updates = events.compactMap { event -> AddressRecord? in
            guard case .addressChanged(let address) = event, address.scope == .universe else { return nil }
            return address
        }
        #expect(updates.map(\.isTentative) == [true, false])
        #expect(Set(updates.map(\.address.description)) == ["2001:db8:77::2"])
    }

    @Test func carrierLossIsALinkEventAndNoRouteEvent() throws {
        let events = try lifecycle.step("gateway side: ip link set vg down").events
        #expect(!events.contains { if case .routesChanged = $0 { true } else if case .routeRemoved = $0 { true } else { false } },
                "the kernel keeps the route and says nothing of it")
        guard case .linkChanged(let vh) = try #require(events.first) else {
            Issue.record("expected a link, got \(events)")
            return
        }
        #expect(vh.isUp && !vh.hasCarrier)
        #expect(vh.operationalState.name == "down", "what the kernel reports for a veth whose peer is down")
    }

    /// An added route is read for its prefix alone; a removed one for what
    /// a lookup it answered would name too (its link and gateway).
    @Test func aRouteIsReadForItsPrefixAndARemovedOneForItsNextHop() throws {
        let everywhere = try #require(RoutePrefix(address: IPAddress("0.0.0.0")!, length: 0))
        #expect(try lifecycle.step("ip route add default").events == [.routesChanged(everywhere)])
        let removed = try lifecycle.step("ip route del default").events
        #expect(removed == [.routeRemoved(RemovedRoute(prefix: everywhere, nextHop: .init(outputInterface: 14, gateway: IPAddress("10.77.0.1"))))], "\(removed)")
    }

    /// A removal whose next hop can't be read (an RTA_OIF cut short, a
    /// gateway not of the route's family's length), or is named otherwise
    /// (RTA_VIA), names no one link: any answer under its prefix may have
    /// been its, and is asked again. It is still a removal of that prefix.
    @Test(arguments: [
        ([8, 0, 4, 0, 3, 0, 0, 0, 8, 0, 5, 0, 10, 77, 0, 1] as [UInt8], RemovedRoute.NextHop(outputInterface: 3, gateway: IPAddress("10.77.0.1"))),
        ([6, 0, 4, 0, 3, 0, 0, 0, 8, 0, 5, 0, 10, 77, 0, 1], nil),
        ([8, 0, 4, 0, 3, 0, 0, 0, 7, 0, 5, 0, 10, 77, 0, 0], nil),
        ([8, 0, 4, 0, 3, 0, 0, 0, 10, 0, 18, 0, 10, 0, 192, 0, 2, 1, 0, 0], nil),
    ])
    func aRemovalsNextHopIsItsLinkAndGatewayOrNone(attributes: [UInt8], nextHop: RemovedRoute.NextHop?) throws {
        let rtmsg: [UInt8] = [2, 24, 0, 0, 254, 3, 0, 1, 0, 0, 0, 0]  // AF_INET /24, main, boot, unicast
        let body = rtmsg + [8, 0, 1, 0, 192, 0, 2, 0] + attributes  // RTA_DST 192.0.2.0
        let length = withUnsafeBytes(of: UInt32(16 + body.count).littleEndian, Array.init)
        let message = length + [25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] + body  // RTM_DELROUTE
        let events = message.withUnsafeBytes { NetlinkDecoder.events(in: $0) }
        let prefix = try #require(RoutePrefix(address: IPAddress("192.0.2.0")!, length: 24))
        #expect(events == [.routeRemoved(RemovedRoute(prefix: prefix, nextHop: nextHop))], "\(events)")
    }

    @Test func deletingALinkEndsWithItsRemoval() throws {
        let added = try lifecycle.step("veth vh moved").events
        let vh = try #require(Self.link(added.first), "expected a link first, got \(added)")
        let events = try lifecycle.step("ip link del vh").events
        #expect(events.last == .linkRemoved(index: vh.index))
        #expect(events.contains { if case .addressRemoved(let a) = $0 { a.address.description == "10.77.0.2" } else { false } })
    }

    @Test func bridgePortNotificationsAreNotTakenForTheLinkItself() throws {
        let bridge = try NetlinkFixture("bridge-port")
        let leaving = try bridge.step("ip link set vh nomaster").events
        // Leaving a bridge sends an AF_BRIDGE RTM_DELLINK for the port: the link stays.
        #expect(leaving.contains(.ignored(type: 17)))
        var table = InterfaceTable()
        for step in bridge.steps { for event in step.events { table.apply(event) } }
        #expect(table.links.values.contains { $0.name == "vh" })
        #expect(table.links.values.contains { $0.name == "br0" })
    }

    @Test func truncatedOrEmptyInputDecodesToNothing() {
        #expect([UInt8]().withUnsafeBytes { NetlinkDecoder.events(in: $0) }.isEmpty)
        let truncated: [UInt8] = [0xff, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00]
        #expect(truncated.withUnsafeBytes { NetlinkDecoder.events(in: $0) }.isEmpty)
    }

    @Test(arguments: [
        ("no route", RouteLookupRefusal.noRoute),
        ("unreachable default", .unreachableRoute),
        ("blackhole default", .blackholeRoute),
        ("prohibit default", .prohibitedRoute),
    ])
    func refusedRouteLookups(step: String, refusal: RouteLookupRefusal) throws {
        #expect(try lookupAnswers(step) == [.failed(refusal)])
    }

    @Test(arguments: [("default via 10.77.0.1", "10.77.0.1"), ("default via fd77::1", "fd77::1")])
    func routeLookupsThroughAGateway(step: String, gateway: String) throws {
        let answers = try lookupAnswers(step)
        guard case .route(let type, let outputInterface, let next, let table, let source, _) = try #require(answers.first) else {
            Issue.record("expected a route, got \(answers)")
            return
        }
        #expect(answers.count == 1)
        #expect(type == .unicast)
        #expect(outputInterface > 1, "the veth, not loopback")
        #expect(next?.description == gateway)
        #expect(table == 254, "the main table")
        #expect(source?.description == (next?.family == .ipv4 ? "10.77.0.2" : "fd77::2"), "the address the kernel would send from")
    }

    /// A route of several next hops in a table of its own: a FIB match names
    /// them all (RTA_MULTIPATH) and its first is read; a lookup names the
    /// one the kernel chose. The table is RTA_TABLE's: the header's byte
    /// says 252 (RT_TABLE_COMPAT) for any table past 255.
    @Test func aMultipathRouteIsReadByItsFirstNextHopInItsOwnTable() throws {
        let matched = try lookupAnswers("multipath default via 10.77.0.1 and 10.77.0.3 in table 1000: fib match for 1.1.1.1")
        let chosen = try lookupAnswers("multipath default in table 1000: lookup 1.1.1.1")
        guard case .route(.unicast, let link, let first?, 1000, nil, nil)? = matched.first,
            case .route(.unicast, link, let picked?, 1000, let source?, nil)? = chosen.first
        else {
            Issue.record("expected unicast routes in table 1000 on one link, got \(matched) and \(chosen)")
            return
        }
        #expect(link > 1, "the veth, not loopback")
        #expect(first.description == "10.77.0.1", "the first next hop")
        #expect(["10.77.0.1", "10.77.0.3"].contains(picked.description))
        #expect(source.description == "10.77.0.2")
    }

    /// An IPv4 route through an IPv6 gateway (RFC 5549, as babeld and BGP
    /// unnumbered set it) names its gateway in RTA_VIA: that is the gateway.
    @Test func anIPv4RouteThroughAnIPv6GatewayNamesThatGateway() throws {
        let answers = try lookupAnswers("default via inet6 fd77::1: lookup 1.1.1.1")
        guard case .route(.unicast, let link, let gateway?, 254, let source?, nil)? = answers.first else {
            Issue.record("expected a unicast route in the main table, got \(answers)")
            return
        }
        #expect(link > 1 && gateway.description == "fd77::1" && source.description == "10.77.0.2", "\(answers)")
    }

    /// An attribute an answer is read from that cannot hold what the kernel
    /// writes there makes the answer malformed, never a guess: RTA_OIF,
    /// RTA_TABLE and RTA_CACHEINFO cut short, an address (RTA_GATEWAY,
    /// RTA_PREFSRC, RTA_VIA's) not of its family's length, in a next hop
    /// too. An attribute not read may be anything, and a gateway of a
    /// family this version does not read is none.
    static let unicastOnLink3 = RouteLookupResult.route(type: .unicast, outputInterface: 3, gateway: nil)
    @Test(arguments: [
        ("RTA_OIF of 2 bytes", [6, 0, 4, 0, 3, 0, 0, 0] as [UInt8], RouteLookupResult.failed(.malformedAnswer)),
        ("RTA_TABLE of 3 bytes", [7, 0, 15, 0, 0xe8, 3, 0, 0], .failed(.malformedAnswer)),
        ("RTA_CACHEINFO of 12 bytes", [16, 0, 12, 0] + [UInt8](repeating: 0, count: 12), .failed(.malformedAnswer)),
        ("RTA_GATEWAY of 3 bytes", [7, 0, 5, 0, 10, 77, 0, 0], .failed(.malformedAnswer)),
        ("RTA_PREFSRC of 16 bytes", [20, 0, 7, 0] + [UInt8](repeating: 0xfd, count: 16), .failed(.malformedAnswer)),
        ("RTA_VIA of its family alone", [6, 0, 18, 0, 10, 0, 0, 0], .failed(.malformedAnswer)),
        ("RTA_VIA of AF_INET6 and 4 bytes", [10, 0, 18, 0, 10, 0, 192, 0, 2, 1, 0, 0], .failed(.malformedAnswer)),
        ("the same in a next hop", [24, 0, 9, 0, 20, 0, 0, 0, 3, 0, 0, 0, 10, 0, 18, 0, 10, 0, 192, 0, 2, 1, 0, 0],
         .failed(.malformedAnswer)),
        ("RTA_VIA of AF_PACKET", [10, 0, 18, 0, 17, 0, 1, 2, 3, 4, 0, 0], unicastOnLink3),
        ("an unknown attribute of 1 byte", [5, 0, 0x7f, 0, 1, 0, 0, 0], unicastOnLink3),
    ])
    func anAttributeThatCannotHoldItsValueIsAMalformedAnswer(what: String, attribute: [UInt8], expected: RouteLookupResult) {
        let rtmsg: [UInt8] = [2, 32, 0, 0, 254, 3, 0, 1, 0, 0, 0, 0]  // AF_INET /32, main, boot, unicast
        let oif: [UInt8] = [8, 0, 4, 0, 3, 0, 0, 0]
        let body = rtmsg + oif + attribute
        let length = withUnsafeBytes(of: UInt32(16 + body.count).littleEndian, Array.init)
        let message = length + [24, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0] + body  // RTM_NEWROUTE, sequence 7
        #expect(HostileNetlinkTests.routeLookupResults(in: message) == [expected], "\(what)")
    }

    /// A route that expires (as a router advertisement's does) says what it
    /// has left; one that does not, says nothing: no timer for it.
    @Test func anExpiringRouteSaysWhatItHasLeft() throws {
        let expiring = try #require(try lookupAnswers("default via fd77::1 expires 300: fib match").first)
        let lifetime = try #require(expiring.lifetime, "\(expiring)")
        #expect(lifetime > .seconds(290) && lifetime <= .seconds(300), "\(lifetime)")
        #expect(try lookupAnswers("default via fd77::1").first?.lifetime == nil)
        #expect(try lookupAnswers("default via 10.77.0.1").first?.lifetime == nil)
        #expect(try lookupAnswers("no route").first?.lifetime == nil)
    }

    private func lookupAnswers(_ step: String) throws -> [RouteLookupResult] {
        let lookups = try NetlinkFixture("route-lookups")
        let datagram = try #require(try lookups.step(step).datagrams.first)
        var results: [RouteLookupResult] = []
        datagram.withUnsafeBytes { bytes in
            NetlinkFrame.forEach(in: bytes) { frame in
                if let result = NetlinkDecoder.routeLookupResult(for: frame) { results.append(result) }
            }
        }
        return results
    }

    /// The link an event carries; nil for any other kind, so that `#require` fails on it.
    private static func link(_ event: NetlinkEvent?) -> LinkRecord? {
        guard case .linkChanged(let link) = event else { return nil }
        return link
    }
}

/// RTM_NEWNEIGH as the kernel sends it to RTNLGRP_NEIGH (laid out as
/// `neigh_fill_info` writes it: the ndmsg, then NDA_DST first).
@Suite("Decoding neighbour messages")
struct NeighbourDecoderTests {
    static func message(type: UInt16 = 28 /* RTM_NEWNEIGH */, state: UInt16, ifindex: Int32 = 3, address: [UInt8] = [10, 77, 0, 1])
        -> [UInt8]
    {
        func bytes<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        let attribute = bytes(UInt16(4 + address.count)) + bytes(UInt16(1)) + address  // NDA_DST
        let ndmsg = [UInt8(address.count == 4 ? AF_INET : AF_INET6), 0, 0, 0] + bytes(ifindex) + bytes(state) + [0, 1]
        let body = ndmsg + attribute
        return bytes(UInt32(16 + body.count)) + bytes(type) + bytes(UInt16(0)) + bytes(UInt32(0)) + bytes(UInt32(0)) + body
    }

    static func decode(_ message: [UInt8]) -> NeighbourRecord? {
        message.withUnsafeBytes { buffer in
            var record: NeighbourRecord?
            NetlinkFrame.forEach(in: buffer) { record = NetlinkDecoder.neighbour(in: $0) }
            return record
        }
    }

    @Test func aFailedGatewayIsItsLinkItsAddressAndFailed() {
        #expect(Self.decode(Self.message(state: 0x20))
            == NeighbourRecord(interfaceIndex: 3, address: IPAddress("10.77.0.1")!, state: .failed))
        #expect(Self.decode(Self.message(state: 0x02))?.state == .reachable)
        #expect(Self.decode(Self.message(state: 0x04))?.state == .other, "stale")
        let v6 = Array(repeating: UInt8(0), count: 15) + [1]
        #expect(Self.decode(Self.message(state: 0x20, ifindex: 7, address: v6))
            == NeighbourRecord(interfaceIndex: 7, address: IPAddress("::1")!, state: .failed))
    }

    @Test func anotherTypeOrATruncatedMessageIsNoRecord() {
        #expect(Self.decode(Self.message(type: 29 /* RTM_DELNEIGH */, state: 0x20)) == nil)
        #expect(Self.decode(Array(Self.message(state: 0x20).prefix(20))) == nil)
    }
}
