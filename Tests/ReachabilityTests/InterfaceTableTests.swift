import Testing
@testable import Reachability

@Suite("Folding netlink events into the interface table")
struct InterfaceTableTests {
    @Test func removingALinkRemovesItsAddresses() {
        var table = table(address("192.0.2.10", on: 2), address("fe80::1", on: 2, prefix: 64, scope: .link))
        table.apply(.linkRemoved(index: 2))
        #expect(table.links.keys.sorted() == [1])
        #expect(table.addresses.values.allSatisfy { $0.interfaceIndex == 1 })
    }

    @Test func aChangedAddressReplacesTheOldOne() {
        var table = table(address("2001:db8::1", on: 2, prefix: 64, tentative: true))
        table.apply(address("2001:db8::1", on: 2, prefix: 64, tentative: false))
        let ipv6 = table.addresses(ofLink: 2)
        #expect(ipv6.count == 1)
        #expect(ipv6.first?.isTentative == false)
    }

    @Test func removingAnAddressIsByKeyNotByFlags() {
        var table = table(address("192.0.2.10", on: 2))
        table.apply(.addressRemoved(AddressRecord(
            interfaceIndex: 2, address: IPAddress("192.0.2.10")!, prefixLength: 24, scope: .universe,
            isTentative: true, isDADFailed: false)))
        #expect(table.addresses(ofLink: 2).isEmpty)
    }

    @Test func onlyIgnoredMessagesAskForNoReevaluation() {
        var table = InterfaceTable()
        let answers = [table.apply(.ignored(type: 28)), table.apply(.routesChanged(nil)), table.apply(.rulesChanged)]
        #expect(answers == [false, true, true])
        #expect(table == InterfaceTable(), "route and rule events leave the table alone: routes are never mirrored")
    }
}
