import CNetlink
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import Reachability

@Suite("Route lookups written by hand")
struct RouteRequestDatagramTests {
    /// Every field a query may have, and none: the bytes are libnl's, as
    /// libnl built them before (`nlmsg_put`, `nlmsg_append`, `nla_put`),
    /// with the port and flags `nl_complete_msg` gave them on a socket
    /// without automatic acks.
    @Test func aRequestIsByteForByteWhatLibnlBuilds() throws {
        var generator = SeededGenerator(seed: 45)
        for round in 0..<2000 {
            let query = Self.randomQuery(using: &generator)
            let matchingRoute = Bool.random(using: &generator)
            let sequence = UInt32.random(in: 0...UInt32.max, using: &generator)
            let port = UInt32.random(in: 0...UInt32.max, using: &generator)
            var datagram = RouteRequestDatagram(requests: 1)
            datagram.append(query, matchingRoute: matchingRoute, sequence: sequence, port: port)
            let expected = try Self.libnl(query, matchingRoute: matchingRoute, sequence: sequence, port: port)
            #expect(datagram.bytes == expected, "round \(round): \(query), matchingRoute \(matchingRoute)")
        }
    }

    /// Requests follow one another whole: each at its own aligned length.
    @Test func requestsFollowOneAnotherInOneDatagram() throws {
        var generator = SeededGenerator(seed: 46)
        var datagram = RouteRequestDatagram(requests: 3)
        var expected: [UInt8] = []
        for sequence in UInt32(1)...3 {
            let query = Self.randomQuery(using: &generator)
            datagram.append(query, matchingRoute: false, sequence: sequence, port: 7)
            expected += try Self.libnl(query, matchingRoute: false, sequence: sequence, port: 7)
        }
        #expect(datagram.bytes == expected)
    }

    private static func randomQuery(using generator: inout SeededGenerator) -> RouteQuery {
        func address(_ family: AddressFamily) -> IPAddress {
            let count = family == .ipv4 ? 4 : 16
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return IPAddress(family: family, bytes: bytes)!
        }
        let family: AddressFamily = Bool.random(using: &generator) ? .ipv4 : .ipv6
        let sourceFamily: AddressFamily = Int.random(in: 0..<4, using: &generator) == 0 ? (family == .ipv4 ? .ipv6 : .ipv4) : family
        return RouteQuery(
            address(family),
            uid: Bool.random(using: &generator) ? UInt32.random(in: 0...UInt32.max, using: &generator) : nil,
            tcpPort: Bool.random(using: &generator) ? UInt16.random(in: 0...UInt16.max, using: &generator) : nil,
            source: Bool.random(using: &generator) ? address(sourceFamily) : nil,
            outputInterface: Bool.random(using: &generator)
                ? [0, -1, 1, 2, Int(UInt32.max), Int(UInt32.max) + 1].randomElement(using: &generator)! : nil)
    }

    /// The request as the lookups built it with libnl, before.
    private static func libnl(_ query: RouteQuery, matchingRoute: Bool, sequence: UInt32, port: UInt32) throws -> [UInt8] {
        let message = try #require(nlmsg_alloc_size(256))
        defer { nlmsg_free(message) }
        try #require(nlmsg_put(message, port, sequence, Int32(RTM_GETROUTE), 0, Int32(NLM_F_REQUEST)) != nil)
        let destination = query.destination
        var header = rtmsg()
        header.rtm_family = UInt8(destination.family == .ipv4 ? AF_INET : AF_INET6)
        header.rtm_dst_len = UInt8(destination.bytes.count * 8)
        header.rtm_flags = UInt32(RTM_F_LOOKUP_TABLE) | (matchingRoute ? UInt32(RTM_F_FIB_MATCH) : 0)
        if let source = query.source, source.family == destination.family {
            header.rtm_src_len = UInt8(source.bytes.count * 8)
        }
        try #require(nlmsg_append(message, &header, MemoryLayout<rtmsg>.size, Int32(NLMSG_ALIGNTO)) == 0)
        try #require(destination.bytes.withUnsafeBytes { nla_put(message, Int32(RTA_DST.rawValue), Int32($0.count), $0.baseAddress) } == 0)
        if let source = query.source, source.family == destination.family {
            try #require(source.bytes.withUnsafeBytes { nla_put(message, Int32(RTA_SRC.rawValue), Int32($0.count), $0.baseAddress) } == 0)
        }
        if let uid = query.uid { try #require(nla_put_u32(message, Int32(RTA_UID.rawValue), uid) == 0) }
        if let link = query.outputInterface {
            let index = link > 0 ? UInt32(exactly: link) ?? UInt32.max : UInt32.max
            try #require(nla_put_u32(message, Int32(RTA_OIF.rawValue), index) == 0)
        }
        if let port = query.tcpPort {
            try #require(nla_put_u8(message, Int32(RTA_IP_PROTO.rawValue), UInt8(IPPROTO_TCP)) == 0)
            try #require(nla_put_u16(message, Int32(RTA_DPORT.rawValue), port.bigEndian) == 0)
        }
        let header2 = try #require(nlmsg_hdr(message))
        return Array(UnsafeRawBufferPointer(start: header2, count: Int(header2.pointee.nlmsg_len)))
    }
}
