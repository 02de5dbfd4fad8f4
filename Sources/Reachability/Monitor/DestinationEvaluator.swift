/// Decides whether one address of a destination is reachable, from the
/// kernel's route lookup for it (asked as the app's uid, for TCP to its
/// port) and the interface table. Pure, like ``ReachabilityEvaluator``,
/// whose reasons it shares.
///
/// Reachable means: a unicast route (or a local one: the app's server on this
/// host), an egress link that is up with carrier, and a source address the
/// kernel would use that can reach that far.
enum DestinationEvaluator {
    /// Looks up every query (one round trip per batch) and judges each answer.
    static func judge(
        _ queries: [RouteQuery], socket: NetlinkQuerySocket, table: InterfaceTable
    ) throws(NetlinkError) -> [AddressVerdict] {
        let lookups = try socket.lookupRoutes(queries)
        return zip(queries, lookups).map { evaluate($0.destination, lookup: $1, table: table) }
    }

    /// `lookup` `nil`: the kernel's answer was lost, and the verdict is unknown.
    static func evaluate(_ address: IPAddress, lookup: RouteLookupResult?, table: InterfaceTable) -> AddressVerdict {
        guard let lookup else { return .unknown(address) }
        func unreachable(_ reason: UnreachableReason) -> AddressVerdict {
            AddressVerdict(address: address, reason: reason, via: nil, lookup: lookup)
        }
        switch lookup {
        case .failed(let refusal):
            return unreachable(ReachabilityEvaluator.reason(for: refusal))
        case .route(let type, let outputInterface, let gateway, let routeTable, let source, _):
            switch type {
            case .unicast, .local: break
            case .broadcast, .anycast, .multicast, .blackhole, .unreachable, .prohibit, .throw, .other:
                return unreachable(ReachabilityEvaluator.reason(forRouteType: type))
            }
            // A link the table does not know yet (its RTM_NEWLINK is still
            // queued) is not trusted: the next batch brings it.
            guard let link = table.links[outputInterface] else { return unreachable(.linkDown) }
            guard link.isUp else { return unreachable(.linkDown) }
            guard link.hasCarrier || link.isLoopback else { return unreachable(.noCarrier) }
            guard let source, sourceIsUsable(source, for: address, on: link, in: table) else {
                return unreachable(.noUsableAddress)
            }
            let path = DestinationPath(
                interface: link.name, index: link.index, family: address.family, gateway: gateway,
                table: routeTable, source: source)
            return AddressVerdict(address: address, reason: nil, via: path, lookup: lookup)
        }
    }

    /// The kernel's chosen source must be an address of this host that is
    /// usable (not tentative, not a failed duplicate) and reaches as far as
    /// the destination: a link-local source serves only a link-local
    /// destination, and loopback only this host. An IPv4 route out of a link
    /// with no IPv4 address of its own is not counted, whatever source the
    /// kernel would borrow.
    private static func sourceIsUsable(
        _ source: IPAddress, for destination: IPAddress, on link: LinkRecord, in table: InterfaceTable
    ) -> Bool {
        guard let record = table.addresses.values.first(where: { $0.address == source }), record.isUsable else {
            return false
        }
        if link.isLoopback { return true }
        if table.links[record.interfaceIndex]?.isLoopback == true { return false }
        if destination.family == .ipv4,
            !table.addresses(ofLink: link.index).contains(where: { $0.family == .ipv4 && $0.isUsable })
        {
            return false
        }
        return record.scope.isRoutable || destination.isLinkLocal
    }
}

/// One address of a destination, judged: reachable with the path its
/// packets would take (`via`), unreachable for a `reason`, or, with
/// neither, unknown: the kernel's answer was lost.
struct AddressVerdict: Sendable, Hashable {
    var address: IPAddress
    var reason: UnreachableReason?
    var via: DestinationPath?
    /// The kernel's answer it was judged from: its route may expire.
    var lookup: RouteLookupResult?

    /// No answer to judge: asked again a second later
    /// (``RouteLookupResult/askAgainAfterFailure``).
    static func unknown(_ address: IPAddress) -> AddressVerdict {
        AddressVerdict(address: address, reason: nil, via: nil, lookup: nil)
    }

    /// `reachable`, `unreachable` or `unknown`.
    var state: DestinationState {
        if reason != nil { return .unreachable }
        return via == nil ? .unknown : .reachable
    }
}

/// Where a destination's packets would go: the egress link, the next hop,
/// the routing table the route came from, and the source address.
struct DestinationPath: Sendable, Hashable {
    var interface: String
    var index: Int
    var family: AddressFamily
    var gateway: IPAddress?
    var table: UInt32
    var source: IPAddress
}
