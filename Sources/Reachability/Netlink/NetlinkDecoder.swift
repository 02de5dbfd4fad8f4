internal import CNetlink
#if canImport(Glibc)
import Glibc
#endif

/// Turns rtnetlink messages into reachd's plain values. Links and addresses are
/// parsed with libnl's own parsers (`nl_msg_parse`); of a route in the event
/// stream only its prefix is read, by hand, which keeps a route flood cheap.
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
    /// parser would build a whole route object for each. `nil` where the
    /// family is not IPv4 or IPv6, or the message is not framed as the
    /// kernel frames it.
    static func route(in message: UnsafeRawBufferPointer, withNextHop: Bool) -> RemovedRoute? {
        let header = NetlinkFrame.headerLength
        guard message.count >= header + MemoryLayout<rtmsg>.size else { return nil }
        let family: AddressFamily
        switch Int32(message[header + routeFamilyOffset]) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return nil
        }
        let width = family == .ipv4 ? 4 : 16
        let length = Int(message[header + routePrefixLengthOffset])
        var destination: [UInt8]?
        var outputInterface: Int?
        var gateway: IPAddress?
        // Several next hops, or one named otherwise: no one link to name.
        var anyNextHop = Int32(message[header + routeTypeOffset]) != RTN_UNICAST
        var offset = header + MemoryLayout<rtmsg>.size
        while offset + 4 <= message.count {
            let attributeLength = Int(message.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let type = message.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self) & 0x3FFF
            guard attributeLength >= 4, offset + attributeLength <= message.count else { return nil }
            let payload = UnsafeRawBufferPointer(rebasing: message[(offset + 4)..<(offset + attributeLength)])
            switch type {
            case UInt16(RTA_DST.rawValue):
                guard payload.count == width else { return nil }
                destination = Array(payload)
            case UInt16(RTA_OIF.rawValue) where withNextHop && payload.count >= 4:
                outputInterface = Int(payload.loadUnaligned(as: UInt32.self))
            case UInt16(RTA_GATEWAY.rawValue) where withNextHop:
                gateway = IPAddress(family: family, bytes: Array(payload))
            case UInt16(RTA_MULTIPATH.rawValue), UInt16(RTA_VIA.rawValue):
                anyNextHop = true
            default:
                break
            }
            offset += (attributeLength + 3) & ~3
        }
        // The default route has no RTA_DST; any other prefix has one.
        guard let bytes = destination ?? (length == 0 ? [UInt8](repeating: 0, count: width) : nil),
            let address = IPAddress(family: family, bytes: bytes), let prefix = RoutePrefix(address: address, length: length)
        else { return nil }
        let nextHop = anyNextHop ? nil : outputInterface.map { RemovedRoute.NextHop(outputInterface: $0, gateway: gateway) }
        return RemovedRoute(prefix: prefix, nextHop: nextHop)
    }

    /// Decodes the kernel's answer to an RTM_GETROUTE request: a route, or an error.
    static func routeLookupResult(for frame: NetlinkFrame) -> RouteLookupResult? {
        switch Int32(frame.type) {
        case Int32(NetlinkFrame.error):
            return .failed(RouteLookupRefusal(errno: frame.errorNumber))
        case Int32(RTM_NEWROUTE):
            guard routeAttributesAreSound(frame.bytes) else { return .failed(.malformedAnswer) }
            let lifetime = routeLifetime(in: frame.bytes)
            return withParsedObject(frame) { route -> RouteLookupResult in
                let type = RouteType(kernelValue: rtnl_route_get_type(route))
                let table = rtnl_route_get_table(route)
                let source = ipAddress(rtnl_route_get_pref_src(route))
                guard rtnl_route_get_nnexthops(route) > 0, let hop = rtnl_route_nexthop_n(route, 0) else {
                    return .route(
                        type: type, outputInterface: 0, gateway: nil, table: table, source: source, lifetime: lifetime)
                }
                // RTA_VIA where the gateway's family is not the route's (an
                // IPv4 route via an IPv6 link-local, as babeld sets it).
                let gateway = ipAddress(rtnl_route_nh_get_gateway(hop)) ?? ipAddress(rtnl_route_nh_get_via(hop))
                return .route(
                    type: type, outputInterface: Int(rtnl_route_nh_get_ifindex(hop)),
                    gateway: gateway, table: table, source: source, lifetime: lifetime)
            }
        default:
            return nil
        }
    }

    /// What an expiring route has left: RTA_CACHEINFO's `rta_expires`, a
    /// signed count of clock ticks (USER_HZ, what `sysconf(_SC_CLK_TCK)`
    /// says, whatever the kernel's HZ). Not RTA_EXPIRES: the kernel sends
    /// it only for multicast routes, as the time since their last use.
    /// libnl's route object does not give it back. `nil` when the route does
    /// not expire (or, by 0, expires within a tick). The attributes were found sound
    /// (``routeAttributesAreSound(_:)``).
    private static func routeLifetime(in message: UnsafeRawBufferPointer) -> Duration? {
        var ticks: Int32?
        var offset = NetlinkFrame.headerLength + MemoryLayout<rtmsg>.size
        while offset + 4 <= message.count {
            let length = Int(message.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let type = message.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self) & 0x3FFF
            guard length >= 4, offset + length <= message.count else { break }
            let payload = offset + 4
            if type == UInt16(RTA_CACHEINFO.rawValue), length - 4 >= cacheExpiresOffset + 4 {
                ticks = message.loadUnaligned(fromByteOffset: payload + cacheExpiresOffset, as: Int32.self)
            }
            offset += (length + 3) & ~3
        }
        guard let ticks, ticks > 0 else { return nil }
        let perSecond = Int64(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        return .milliseconds(Int64(ticks) * 1000 / perSecond)
    }

    /// Whether a route message's attributes are framed as the kernel frames
    /// them, before libnl's route parser sees them: it trusts their lengths,
    /// and an `RTA_VIA` shorter than its family field made it `memcpy` -1
    /// bytes, and a last multipath next hop whose padding overran the
    /// attribute wrapped its remaining length around and allocated next hops
    /// until memory ran out (libFuzzer found both, with libnl 3.7). The
    /// kernel pads every next hop, so here a padded one must fit.
    private static func routeAttributesAreSound(_ message: UnsafeRawBufferPointer) -> Bool {
        let attributes = NetlinkFrame.headerLength + MemoryLayout<rtmsg>.size
        guard message.count >= attributes else { return false }
        return attributesAreSound(message, from: attributes, to: message.count, withinNextHop: false)
    }

    private static func attributesAreSound(
        _ message: UnsafeRawBufferPointer, from start: Int, to end: Int, withinNextHop: Bool
    ) -> Bool {
        let nextHopHeader = MemoryLayout<rtnexthop>.size
        var offset = start
        while offset + 4 <= end {
            let length = Int(message.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            // Without NLA_F_NESTED and NLA_F_NET_BYTEORDER.
            let type = Int32(message.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self) & 0x3FFF)
            guard length >= 4, offset + length <= end else { return false }
            if type == Int32(RTA_VIA.rawValue), length - 4 < 2 { return false }
            if type == Int32(RTA_MULTIPATH.rawValue) {
                guard !withinNextHop else { return false }
                var hop = offset + 4
                while hop + nextHopHeader <= offset + length {
                    let hopLength = Int(message.loadUnaligned(fromByteOffset: hop, as: UInt16.self))
                    guard hopLength >= nextHopHeader, hop + ((hopLength + 3) & ~3) <= offset + length,
                        attributesAreSound(message, from: hop + nextHopHeader, to: hop + hopLength, withinNextHop: true)
                    else { return false }
                    hop += (hopLength + 3) & ~3
                }
            }
            offset += (length + 3) & ~3
        }
        return true
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
        let family: AddressFamily
        switch nl_addr_get_family(address) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return nil
        }
        let bytes = UnsafeRawBufferPointer(start: raw, count: Int(nl_addr_get_len(address)))
        return IPAddress(family: family, bytes: Array(bytes))
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
