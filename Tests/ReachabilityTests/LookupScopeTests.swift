import Testing
@testable import Reachability

/// Which lookups a batch of netlink events can have moved: a route decides
/// a lookup only for the addresses its prefix holds.
struct LookupScopeTests {
    static func prefix(_ text: String) -> RoutePrefix {
        let parts = text.split(separator: "/")
        return RoutePrefix(address: IPAddress(String(parts[0]))!, length: Int(parts[1])!)!
    }

    @Test(arguments: [
        ("0.0.0.0/0", "1.1.1.1", true),
        ("0.0.0.0/1", "1.1.1.1", true),
        ("128.0.0.0/1", "1.1.1.1", false),
        ("10.99.0.0/16", "10.99.200.1", true),
        ("10.99.0.0/16", "10.98.0.1", false),
        ("192.0.2.52/31", "192.0.2.53", true),
        ("192.0.2.54/31", "192.0.2.53", false),
        ("192.0.2.53/32", "192.0.2.53", true),
        ("::/0", "2606:4700:4700::1111", true),
        ("::/0", "1.1.1.1", false),
        ("2606:4700::/33", "2606:4700:4700::1111", true),
        ("2606:4700:8000::/33", "2606:4700:4700::1111", false),
        ("fd77::/64", "fd77::2", true),
    ])
    func aPrefixHoldsTheAddressesItsLeadingBitsName(prefix: String, address: String, holds: Bool) {
        #expect(Self.prefix(prefix).contains(IPAddress(address)!) == holds)
    }

    @Test func aLengthPastTheAddressIsNoPrefix() {
        #expect(RoutePrefix(address: IPAddress("10.0.0.0")!, length: 33) == nil)
        #expect(RoutePrefix(address: IPAddress("::")!, length: 129) == nil)
        #expect(RoutePrefix(address: IPAddress("::")!, length: 128) != nil)
    }

    @Test func routesElsewhereInTheTableMoveNoLookupOfTheProbes() {
        let flood = (0..<200).map { NetlinkEvent.routesChanged(Self.prefix("10.\($0).0.0/16")) }
        let scope = LookupScope(flood)
        #expect(!scope.covers(IPAddress("1.1.1.1")!) && !scope.covers(IPAddress("2606:4700:4700::1111")!))
        #expect(scope.covers(IPAddress("10.7.0.1")!))
    }

    @Test func onlyIgnoredMessagesAskNothing() {
        #expect(LookupScope([.ignored(type: 28), .ignored(type: 44)]) == .nothing)
        #expect(!LookupScope([.ignored(type: 28)]).covers(IPAddress("1.1.1.1")!))
    }

    @Test(arguments: [
        NetlinkEvent.rulesChanged, .routesChanged(nil), .linkRemoved(index: 3),
        .addressRemoved(AddressRecord(
            interfaceIndex: 2, address: IPAddress("192.0.2.10")!, prefixLength: 24, scope: .universe,
            isTentative: false, isDADFailed: false)),
    ])
    func aLinkAnAddressARuleOrAnUnreadRouteMovesEverything(event: NetlinkEvent) {
        let scope = LookupScope([.routesChanged(Self.prefix("10.1.0.0/16")), event, .ignored(type: 28)])
        #expect(scope == .everything)
        #expect(scope.covers(IPAddress("1.1.1.1")!))
    }
}
