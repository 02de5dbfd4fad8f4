internal import CNetlink
#if canImport(Glibc)
import Glibc
#endif

/// Route lookups (RTM_GETROUTE) written one after another into one
/// datagram, as the kernel takes them: each request is answered on its own,
/// under its sequence number.
///
/// Written by hand, where libnl built each request in a message of its own,
/// allocated, filled an attribute at a time, copied into the datagram and
/// freed: about 4k of the 14k instructions the two lookups of a route
/// change cost (callgrind). A test compares the bytes with libnl's for
/// random queries.
struct RouteRequestDatagram {
    private(set) var bytes: [UInt8] = []
    /// The sequence number of each request, in the order written.
    private(set) var sequences: [UInt32] = []

    /// Room for `requests` requests of the usual size, so that a batch
    /// grows its buffer once.
    init(requests: Int) {
        bytes.reserveCapacity(requests * 64)
        sequences.reserveCapacity(requests)
    }

    /// One request for `query` under `sequence`, from the socket bound to
    /// `port`; with `matchingRoute`, for the route the table holds
    /// (RTM_F_FIB_MATCH) rather than a copy made for the packet.
    mutating func append(_ query: RouteQuery, matchingRoute: Bool, sequence: UInt32, port: UInt32) {
        let start = bytes.count
        let destination = query.destination
        let source = query.source.flatMap { $0.family == destination.family ? $0 : nil }
        // struct nlmsghdr; its length is filled in once the attributes are.
        put32(0)
        put16(UInt16(RTM_GETROUTE))
        put16(UInt16(NLM_F_REQUEST))
        put32(sequence)
        put32(port)
        // struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, flags.
        bytes.append(UInt8(destination.family == .ipv4 ? AF_INET : AF_INET6))
        bytes.append(UInt8(destination.bytes.count * 8))
        bytes.append(UInt8((source?.bytes.count ?? 0) * 8))
        bytes.append(contentsOf: repeatElement(0, count: 5))
        // Without RTM_F_LOOKUP_TABLE the kernel answers an IPv4 lookup with
        // table `main` whichever table the route came from (as `ip route
        // get` knows).
        put32(UInt32(RTM_F_LOOKUP_TABLE) | (matchingRoute ? UInt32(RTM_F_FIB_MATCH) : 0))
        attribute(RTA_DST.rawValue, destination.bytes)
        if let source { attribute(RTA_SRC.rawValue, source.bytes) }
        if let uid = query.uid { attribute(RTA_UID.rawValue, uid) }
        if let link = query.outputInterface {
            // The kernel reads 0 as no link at all: an index no link has is
            // asked as one it refuses.
            attribute(RTA_OIF.rawValue, link > 0 ? UInt32(exactly: link) ?? UInt32.max : UInt32.max)
        }
        if let port = query.tcpPort {
            attribute(RTA_IP_PROTO.rawValue, [UInt8(IPPROTO_TCP)])
            // Network byte order, as the kernel reads RTA_DPORT.
            attribute(RTA_DPORT.rawValue, [UInt8(port >> 8), UInt8(port & 0xFF)])
        }
        let length = UInt32(bytes.count - start)
        withUnsafeBytes(of: length) { bytes.replaceSubrange(start..<start + 4, with: $0) }
        sequences.append(sequence)
    }

    /// `struct rtattr` and its value, padded to four bytes with zeros.
    private mutating func attribute(_ type: UInt32, _ value: [UInt8]) {
        put16(UInt16(4 + value.count))
        put16(UInt16(type))
        bytes.append(contentsOf: value)
        bytes.append(contentsOf: repeatElement(0, count: (4 - value.count % 4) % 4))
    }

    private mutating func attribute(_ type: UInt32, _ value: UInt32) {
        put16(8)
        put16(UInt16(type))
        put32(value)
    }

    // Host order, as netlink's headers and integer attributes are.
    private mutating func put16(_ value: UInt16) { withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) } }
    private mutating func put32(_ value: UInt32) { withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) } }
}
