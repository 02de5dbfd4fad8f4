#if canImport(Glibc)
import Glibc
#endif
@testable import Reachability

/// Small builders for hand-made interface tables, for the rules no recorded
/// session happens to cover.
func link(
    _ index: Int, _ name: String, up: Bool = true, carrier: Bool = true, loopback: Bool = false
) -> NetlinkEvent {
    .linkChanged(LinkRecord(
        index: index, name: name, isUp: up, hasCarrier: carrier, isLoopback: loopback,
        operationalState: carrier && up ? .up : .down))
}

func address(
    _ text: String, on index: Int, prefix: Int = 24, scope: AddressScope = .universe,
    tentative: Bool = false, dadFailed: Bool = false
) -> NetlinkEvent {
    .addressChanged(AddressRecord(
        interfaceIndex: index, address: IPAddress(text)!, prefixLength: prefix, scope: scope,
        isTentative: tentative, isDADFailed: dadFailed))
}

/// lo with its usual addresses, and eth0 (index 2) with the given ones.
func table(eth0 up: Bool = true, carrier: Bool = true, _ addresses: NetlinkEvent...) -> InterfaceTable {
    InterfaceTable(replaying: [
        link(1, "lo", loopback: true),
        address("127.0.0.1", on: 1, prefix: 8, scope: .host),
        address("::1", on: 1, prefix: 128, scope: .host),
        link(2, "eth0", up: up, carrier: carrier),
    ] + addresses)
}

func route(
    via gateway: String?, on index: Int = 2, type: RouteType = .unicast, table: UInt32 = 254, source: String? = nil
) -> RouteLookupResult {
    .route(type: type, outputInterface: index, gateway: gateway.flatMap(IPAddress.init), table: table,
           source: source.flatMap(IPAddress.init))
}

let noRoute = RouteLookupResult.failed(.noRoute)
