internal import CNetlink
#if canImport(Glibc)
import Glibc
#endif

/// Turns rtnetlink messages into reachd's plain values. Links, addresses and
/// neighbours are parsed with libnl's own parsers (`nl_msg_parse`). Routes
/// are read by hand, from the header and the few attributes used: of a
/// notification its prefix (and a removal's next hop), which keeps a route
/// flood cheap; of a lookup's answer its next hop, table, source and
/// lifetime, which keeps a route change's lookups cheap.
enum NetlinkDecoder {
    // IFF_* from <linux/if.h>, which clashes with glibc's <net/if.h> in one module.
    private static let flagUp: UInt32 = 0x1
    private static let flagLoopback: UInt32 = 0x8
    private static let flagLowerUp: UInt32 = 0x1_0000
    // Read once: a key path's offset is found at run time, through the
    // type's metadata, on each use (perf: 2% of a route change in-process).
    private static let routeFamilyOffset = MemoryLayout<rtmsg>.offset(of: \.rtm_family)!
    private static let routePrefixLengthOffset = MemoryLayout<rtmsg>.offset(of: \.rtm_dst_len)!
    private static let routeTypeOffset = MemoryLayout<rtmsg>.offset(of: \.rtm_type)!
    private static let routeTableOffset = MemoryLayout<rtmsg>.offset(of: \.rtm_table)!
    private static let nextHopInterfaceOffset = MemoryLayout<rtnexthop>.offset(of: \.rtnh_ifindex)!
    private static let cacheExpiresOffset = MemoryLayout<rta_cacheinfo>.offset(of: \.rta_expires)!

    /// Decodes every message in a datagram, or in a recorded fixture.
    static func events(in buffer: UnsafeRawBufferPointer) -> [NetlinkEvent] {
        var events: [NetlinkEvent] = []
        NetlinkFrame.forEach(in: buffer) { events.append(event(for: $0)) }
        return events
    }

    static func event(for frame: NetlinkFrame) -> NetlinkEvent {
        let ignored = NetlinkEvent.ignored(type: frame.type)
        switch Int(frame.type) {
        case RTM_NEWLINK:
            return link(in: frame).map(NetlinkEvent.linkChanged) ?? ignored
        case RTM_DELLINK:
            return link(in: frame).map { .linkRemoved(index: $0.index) } ?? ignored
        case RTM_NEWADDR:
            return address(in: frame).map(NetlinkEvent.addressChanged) ?? ignored
        case RTM_DELADDR:
            return address(in: frame).map(NetlinkEvent.addressRemoved) ?? ignored
        case RTM_NEWROUTE:
            return .routesChanged(route(in: frame.bytes, withNextHop: false)?.prefix)
        case RTM_DELROUTE:
            return .routeRemoved(route(in: frame.bytes, withNextHop: true))
        case RTM_NEWRULE, RTM_DELRULE:
            return .rulesChanged
        default:
            return ignored
        }
    }

    /// The prefix a route notification names and, `withNextHop`, its one
    /// next hop (a removal's: ``RemovedRoute``), read from its header and
    /// attributes by hand: a route flood is thousands of these, and libnl's
    /// parser would build a whole route object for each. The next hop's
    /// link and gateway are read as a lookup's answer reads them
    /// (``NextHop``), so the two compare; a next hop named otherwise
    /// (RTA_VIA, RTA_MULTIPATH) or unreadable is none. `nil` where the
    /// family is not IPv4 or IPv6, or the message is not framed as the
    /// kernel frames it.
    static func route(in message: UnsafeRawBufferPointer, withNextHop: Bool) -> RemovedRoute? {
        let header = NetlinkFrame.headerLength
        guard message.count >= header + MemoryLayout<rtmsg>.size,
            let family = AddressFamily(kernelValue: Int32(message[header + routeFamilyOffset]))
        else { return nil }
        let length = Int(message[header + routePrefixLengthOffset])
        var destination: IPAddress?
        var own = NextHop()
        // Several next hops, or one named otherwise: no one link to name.
        var anyNextHop = Int32(message[header + routeTypeOffset]) != RTN_UNICAST
        var attributes = NetlinkAttributes(UnsafeRawBufferPointer(rebasing: message[(header + MemoryLayout<rtmsg>.size)...]))
        while let (type, payload) = attributes.next() {
            switch type {
            case UInt16(RTA_DST.rawValue):
                guard let address = IPAddress(family: family, bytes: payload) else { return nil }
                destination = address
            case UInt16(RTA_MULTIPATH.rawValue), UInt16(RTA_VIA.rawValue):
                anyNextHop = true
            default:
                // Only a removal's next hop is read: a flood of additions
                // reads no more than their prefixes. One that can't be read
                // names no one link: any answer under the prefix may be its.
                if withNextHop, !own.take(type, payload, family: family) { anyNextHop = true }
            }
        }
        guard !attributes.isBroken else { return nil }
        // The default route has no RTA_DST; any other prefix has one.
        guard let address = destination ?? (length == 0 ? IPAddress.zero(family) : nil),
            let prefix = RoutePrefix(address: address, length: length)
        else { return nil }
        let nextHop = anyNextHop ? nil : own.outputInterface.map { RemovedRoute.NextHop(outputInterface: $0, gateway: own.gateway) }
        return RemovedRoute(prefix: prefix, nextHop: nextHop)
    }

    /// Decodes the kernel's answer to an RTM_GETROUTE request: a route, or an error.
    static func routeLookupResult(for frame: NetlinkFrame) -> RouteLookupResult? {
        switch Int32(frame.type) {
        case Int32(NetlinkFrame.error):
            return .failed(RouteLookupRefusal(errno: frame.errorNumber))
        case Int32(RTM_NEWROUTE):
            guard routeAttributesAreSound(frame.bytes), let answer = answeredRoute(in: frame.bytes) else {
                return .failed(.malformedAnswer)
            }
            return answer
        default:
            return nil
        }
    }

    /// A lookup's answer, read from its header and attributes by hand, as
    /// notifications are: two to four come with each route change, and
    /// libnl's parser copied each message and built a route object, its
    /// next hops and an object per address for it (about 2.8k instructions
    /// an answer, callgrind). The next hop is a multipath route's first
    /// (RTA_MULTIPATH, in a `fib match` answer), else the route's own
    /// (RTA_OIF, and RTA_GATEWAY, or RTA_VIA where the gateway's family is
    /// not the route's, as babeld sets it); a table in RTA_TABLE stands for
    /// the header's. `nil` where an attribute it reads cannot hold what the
    /// kernel writes there (cut short, or an address not of its family's
    /// length). The attributes were found framed as the kernel frames them
    /// (``routeAttributesAreSound(_:)``).
    private static func answeredRoute(in message: UnsafeRawBufferPointer) -> RouteLookupResult? {
        let header = NetlinkFrame.headerLength
        guard message.count >= header + MemoryLayout<rtmsg>.size else { return nil }
        let family = AddressFamily(kernelValue: Int32(message[header + routeFamilyOffset]))
        var table = UInt32(message[header + routeTableOffset])
        var source: IPAddress?
        var own = NextHop()
        var firstOfSeveral: NextHop?
        var lifetime: Duration?
        for (type, payload) in NetlinkAttributes(UnsafeRawBufferPointer(rebasing: message[(header + MemoryLayout<rtmsg>.size)...])) {
            switch type {
            case UInt16(RTA_TABLE.rawValue):
                guard payload.count >= 4 else { return nil }
                table = payload.loadUnaligned(as: UInt32.self)
            case UInt16(RTA_PREFSRC.rawValue):
                guard let family else { break }
                guard let address = IPAddress(family: family, bytes: payload) else { return nil }
                source = address
            case UInt16(RTA_CACHEINFO.rawValue):
                guard payload.count >= MemoryLayout<rta_cacheinfo>.size else { return nil }
                lifetime = routeLifetime(ticks: payload.loadUnaligned(fromByteOffset: cacheExpiresOffset, as: Int32.self))
            case UInt16(RTA_MULTIPATH.rawValue):
                // Framed as the kernel frames next hops: each fits, padded.
                let hopHeader = MemoryLayout<rtnexthop>.size
                firstOfSeveral = nil
                guard payload.count >= hopHeader else { break }
                let hopLength = Int(payload.loadUnaligned(as: UInt16.self))
                var hop = NextHop()
                hop.outputInterface = Int(payload.loadUnaligned(fromByteOffset: nextHopInterfaceOffset, as: Int32.self))
                for (type, attribute) in NetlinkAttributes(UnsafeRawBufferPointer(rebasing: payload[hopHeader..<hopLength])) {
                    // A next hop's link is in its header, never an RTA_OIF.
                    guard type == UInt16(RTA_OIF.rawValue) || hop.take(type, attribute, family: family) else { return nil }
                }
                firstOfSeveral = hop
            default:
                guard own.take(type, payload, family: family) else { return nil }
            }
        }
        let hop = firstOfSeveral ?? own
        return .route(
            type: RouteType(kernelValue: message[header + routeTypeOffset]), outputInterface: hop.outputInterface ?? 0,
            gateway: hop.gateway ?? hop.via, table: table, source: source, lifetime: lifetime)
    }

    /// A route's next hop, as its message names it: the route's own
    /// attributes, or one of a multipath route's (`struct rtnexthop`'s).
    private struct NextHop {
        /// RTA_OIF, or the multipath next hop's `rtnh_ifindex`.
        var outputInterface: Int?
        var gateway: IPAddress?
        /// RTA_VIA: a gateway in a family of its own (`struct rtvia`).
        var via: IPAddress?

        /// Takes in an attribute of the next hop's (RTA_OIF, RTA_GATEWAY,
        /// RTA_VIA; any other is no concern of it): false where it cannot
        /// hold what the kernel writes there. An address of a family this
        /// version does not read is none.
        mutating func take(_ type: UInt16, _ payload: UnsafeRawBufferPointer, family: AddressFamily?) -> Bool {
            switch type {
            case UInt16(RTA_OIF.rawValue):
                guard payload.count >= 4 else { return false }
                outputInterface = Int(payload.loadUnaligned(as: Int32.self))
            case UInt16(RTA_GATEWAY.rawValue):
                guard let family else { break }
                guard let address = IPAddress(family: family, bytes: payload) else { return false }
                gateway = address
            case UInt16(RTA_VIA.rawValue):
                guard payload.count >= 2 else { return false }
                guard let viaFamily = AddressFamily(kernelValue: Int32(payload.loadUnaligned(as: UInt16.self))) else { break }
                guard let address = IPAddress(family: viaFamily, bytes: UnsafeRawBufferPointer(rebasing: payload[2...])) else { return false }
                via = address
            default:
                break
            }
            return true
        }
    }

    /// What an expiring route has left, from RTA_CACHEINFO's `rta_expires`:
    /// a signed count of clock ticks (USER_HZ, what `sysconf(_SC_CLK_TCK)`
    /// says, whatever the kernel's HZ). Not RTA_EXPIRES: the kernel sends
    /// it only for multicast routes, as the time since their last use.
    /// `nil` when the route does not expire (or, by 0, expires within a tick).
    private static func routeLifetime(ticks: Int32) -> Duration? {
        guard ticks > 0 else { return nil }
        let perSecond = Int64(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        return .milliseconds(Int64(ticks) * 1000 / perSecond)
    }

    /// Whether a route message's attributes are framed as the kernel frames
    /// them, before anything is read of them: each fits in what holds it,
    /// an `RTA_VIA` holds its family field, and a multipath next hop fits
    /// with its padding, as the kernel pads every one. (libnl's route
    /// parser, which read answers before, trusted those lengths: libFuzzer
    /// found it `memcpy` -1 bytes, and allocate next hops until memory ran
    /// out, with libnl 3.7.)
    private static func routeAttributesAreSound(_ message: UnsafeRawBufferPointer) -> Bool {
        let attributes = NetlinkFrame.headerLength + MemoryLayout<rtmsg>.size
        guard message.count >= attributes else { return false }
        return attributesAreSound(message, from: attributes, to: message.count, withinNextHop: false)
    }

    private static func attributesAreSound(
        _ message: UnsafeRawBufferPointer, from start: Int, to end: Int, withinNextHop: Bool
    ) -> Bool {
        let nextHopHeader = MemoryLayout<rtnexthop>.size
        var attributes = NetlinkAttributes(UnsafeRawBufferPointer(rebasing: message[start..<end]))
        while let (type, payload) = attributes.next() {
            if type == UInt16(RTA_VIA.rawValue), payload.count < 2 { return false }
            if type == UInt16(RTA_MULTIPATH.rawValue) {
                guard !withinNextHop else { return false }
                var hop = 0
                while hop + nextHopHeader <= payload.count {
                    let hopLength = Int(payload.loadUnaligned(fromByteOffset: hop, as: UInt16.self))
                    guard hopLength >= nextHopHeader, hop + ((hopLength + 3) & ~3) <= payload.count,
                        attributesAreSound(payload, from: hop + nextHopHeader, to: hop + hopLength, withinNextHop: true)
                    else { return false }
                    hop += (hopLength + 3) & ~3
                }
            }
        }
        return !attributes.isBroken
    }

    private static func link(in frame: NetlinkFrame) -> LinkRecord? {
        // Bridge port notifications (ifi_family AF_BRIDGE) share RTM_NEWLINK and
        // RTM_DELLINK; an RTM_DELLINK of that family means "left the bridge", not
        // "gone". Only AF_UNSPEC messages describe the link itself. Read the
        // family from the message: libnl reports AF_BRIDGE for a bridge device's
        // own AF_UNSPEC message, which would hide every bridge.
        let familyOffset = NetlinkFrame.headerLength
        guard frame.bytes.count > familyOffset, frame.bytes[familyOffset] == UInt8(AF_UNSPEC) else { return nil }
        return withParsedObject(frame) { link -> LinkRecord? in
            let index = Int(rtnl_link_get_ifindex(link))
            let flags = rtnl_link_get_flags(link)
            return LinkRecord(
                index: index,
                name: rtnl_link_get_name(link).map { String(cString: $0) } ?? "if\(index)",
                isUp: flags & flagUp != 0,
                hasCarrier: flags & flagLowerUp != 0,
                isLoopback: flags & flagLoopback != 0,
                operationalState: OperationalState(kernelValue: rtnl_link_get_operstate(link)),
                hardwareType: UInt32(rtnl_link_get_arptype(link)),
                kind: rtnl_link_get_type(link).map { String(cString: $0) })
        } ?? nil
    }

    private static func address(in frame: NetlinkFrame) -> AddressRecord? {
        withParsedObject(frame) { address -> AddressRecord? in
            guard let local = ipAddress(rtnl_addr_get_local(address)) else { return nil }
            let flags = UInt32(rtnl_addr_get_flags(address))
            return AddressRecord(
                interfaceIndex: Int(rtnl_addr_get_ifindex(address)),
                address: local,
                prefixLength: Int(rtnl_addr_get_prefixlen(address)),
                scope: AddressScope(kernelValue: UInt8(truncatingIfNeeded: rtnl_addr_get_scope(address))),
                isTentative: flags & UInt32(IFA_F_TENTATIVE) != 0,
                isDADFailed: flags & UInt32(IFA_F_DADFAILED) != 0)
        } ?? nil
    }

    /// An RTM_NEWNEIGH message: which address on which link, in what state.
    static func neighbour(in frame: NetlinkFrame) -> NeighbourRecord? {
        guard Int(frame.type) == RTM_NEWNEIGH else { return nil }
        return withParsedObject(frame) { neighbour -> NeighbourRecord? in
            guard let address = ipAddress(rtnl_neigh_get_dst(neighbour)) else { return nil }
            let state = rtnl_neigh_get_state(neighbour)
            return NeighbourRecord(
                interfaceIndex: Int(rtnl_neigh_get_ifindex(neighbour)), address: address,
                state: state & Int32(NUD_FAILED) != 0 ? .failed : state & Int32(NUD_REACHABLE) != 0 ? .reachable : .other)
        } ?? nil
    }

    private static func ipAddress(_ address: OpaquePointer?) -> IPAddress? {
        guard let address, let raw = nl_addr_get_binary_addr(address) else { return nil }
        guard let family = AddressFamily(kernelValue: nl_addr_get_family(address)) else { return nil }
        let bytes = UnsafeRawBufferPointer(start: raw, count: Int(nl_addr_get_len(address)))
        return IPAddress(family: family, bytes: bytes)
    }

    /// Hands the libnl object that `nl_msg_parse` builds from this message to
    /// `body`; `nil` when libnl cannot parse it.
    private static func withParsedObject<Result>(
        _ frame: NetlinkFrame, _ body: (OpaquePointer) -> Result
    ) -> Result? {
        let header = UnsafeMutableRawPointer(mutating: frame.bytes.baseAddress!)
            .assumingMemoryBound(to: nlmsghdr.self)
        guard let message = nlmsg_convert(header) else { return nil }
        defer { nlmsg_free(message) }
        // Without a protocol, libnl finds no parser: "message type not supported".
        nlmsg_set_proto(message, NETLINK_ROUTE)
        var object: OpaquePointer?
        let status = withUnsafeMutablePointer(to: &object) { slot in
            nl_msg_parse(message, { parsed, slot in
                guard let parsed, let slot else { return }
                nl_object_get(parsed)
                slot.assumingMemoryBound(to: OpaquePointer?.self).pointee = parsed
            }, slot)
        }
        guard let object else { return nil }
        defer { nl_object_put(object) }
        guard status >= 0 else { return nil }
        return body(object)
    }
}

private extension AddressFamily {
    /// The family an AF_* value names; `nil` for any but AF_INET and AF_INET6.
    init?(kernelValue value: Int32) {
        switch value {
        case AF_INET: self = .ipv4
        case AF_INET6: self = .ipv6
        default: return nil
        }
    }
}
