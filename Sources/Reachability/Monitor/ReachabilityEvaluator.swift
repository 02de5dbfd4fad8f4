#if canImport(Glibc)
import Glibc
#endif

/// Decides what is reachable from the interface table and the kernel's own
/// route lookups. Pure: no I/O, no clock, so every rule is a unit test.
enum ReachabilityEvaluator {
    /// The destinations whose route lookups stand for "the Internet". Any global
    /// unicast address would do; these are well-known anycast resolvers, and no
    /// packet is ever sent to them.
    static let probeDestinations: [AddressFamily: IPAddress] = [
        .ipv4: IPAddress("1.1.1.1")!,
        .ipv6: IPAddress("2606:4700:4700::1111")!,
    ]

    static func evaluate(
        _ family: AddressFamily, table: InterfaceTable, lookup: RouteLookupResult
    ) -> FamilyStatus {
        let fallback: ReachabilityLevel = hasLocalPresence(family, in: table) ? .local : .offline
        func notOnline(_ reason: UnreachableReason) -> FamilyStatus {
            FamilyStatus(reachability: fallback, reason: reason, path: nil)
        }

        switch lookup {
        case .failed(let refusal):
            return notOnline(reason(for: refusal))
        case .route(let type, let outputInterface, let gateway, _, let source, _):
            guard type == .unicast else { return notOnline(reason(forRouteType: type)) }
            // A link the table does not know yet (its RTM_NEWLINK is still queued)
            // is not trusted: the next batch brings it.
            guard let link = table.links[outputInterface] else { return notOnline(.linkDown) }
            guard !link.isLoopback else { return notOnline(.loopbackRoute) }
            guard link.isUp else { return notOnline(.linkDown) }
            // The kernel keeps routes on a link that lost carrier (flagged
            // linkdown) and still returns them from a lookup: check ourselves.
            guard link.hasCarrier else { return notOnline(.noCarrier) }
            guard table.countedAddresses(of: family).contains(where: { $0.scope.isRoutable && $0.isUsable })
            else { return notOnline(.noUsableAddress) }
            let path = NetworkPath(
                interface: link.name, index: link.index, family: family,
                gateway: gateway?.description, source: source?.description)
            return FamilyStatus(reachability: .online, reason: nil, path: path)
        }
    }

    /// The interface list as published: every link in index order, each with
    /// its addresses in a stable order.
    static func interfaces(in table: InterfaceTable, metering: (LinkRecord) -> Metering = { _ in .no }) -> [InterfaceStatus] {
        table.links.values.sorted { $0.index < $1.index }.map { link in
            let addresses = table.addresses(ofLink: link.index)
                .sorted(by: listedBefore)
                .map {
                    InterfaceAddress(
                        address: $0.address.description, prefix: $0.prefixLength,
                        family: $0.family, scope: $0.scope.name)
                }
            return InterfaceStatus(
                name: link.name, index: link.index, up: link.isUp, carrier: link.hasCarrier,
                operstate: link.operationalState.name, loopback: link.isLoopback, addresses: addresses,
                metered: link.isLoopback ? .no : metering(link))
        }
    }

    /// IPv4 before IPv6, then by address bytes, then by prefix.
    private static func listedBefore(_ a: AddressRecord, _ b: AddressRecord) -> Bool {
        if a.family != b.family { return a.family == .ipv4 }
        if a.address != b.address { return a.address.precedes(b.address) }
        return a.prefixLength < b.prefixLength
    }

    /// A non-loopback link that is up with carrier and has a usable address of
    /// the family, of any scope (IPv6 link-local counts here, and only here).
    private static func hasLocalPresence(_ family: AddressFamily, in table: InterfaceTable) -> Bool {
        table.countedAddresses(of: family).contains { address in
            guard address.isUsable, address.scope.isOnALink,
                let link = table.links[address.interfaceIndex]
            else { return false }
            return link.isUp && link.hasCarrier
        }
    }

    static func reason(for refusal: RouteLookupRefusal) -> UnreachableReason {
        switch refusal {
        case .noRoute: .noRoute
        case .unreachableRoute: .unreachableRoute
        case .blackholeRoute: .blackholeRoute
        case .prohibitedRoute: .prohibitedRoute
        case .malformedAnswer, .other: .unusableRoute
        }
    }

    static func reason(forRouteType type: RouteType) -> UnreachableReason {
        switch type {
        case .blackhole: .blackholeRoute
        case .unreachable: .unreachableRoute
        case .prohibit: .prohibitedRoute
        case .unicast, .local, .broadcast, .anycast, .multicast, .throw, .other: .unusableRoute
        }
    }
}
