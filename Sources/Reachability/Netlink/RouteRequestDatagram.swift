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

    /// Room for `requests` requests of the usual size, so that a batch
    /// grows its buffer once.
    init(requests: Int) {
        bytes.reserveCapacity(requests * 64)
    }

    /// One request for `query` under `sequence`, from the socket bound to
    /// `port`; with `matchingRoute`, for the route the table holds
    /// (RTM_F_FIB_MATCH) rather than a copy made for the packet.
    mutating func append(_ query: RouteQuery, matchingRoute: Bool, sequence: UInt32, port: UInt32) {
        let destination = query.destination
        let source = query.source.flatMap { $0.family == destination.family ? $0 : nil }
        // Its length first, then the bytes written in place over zeros:
        // what is not written (the padding, rtmsg's unused fields) is zero.
        var length = Self.headerBytes + Self.attributeBytes(destination.count)
        if let source { length += Self.attributeBytes(source.count) }
        if query.uid != nil { length += Self.attributeBytes(4) }
        if query.outputInterface != nil { length += Self.attributeBytes(4) }
        if query.tcpPort != nil { length += Self.attributeBytes(1) + Self.attributeBytes(2) }
        let start = bytes.count
        var at = start
        bytes.append(contentsOf: repeatElement(0, count: length))
        bytes.withUnsafeMutableBytes { buffer in
            // Host order, as netlink's headers and integer attributes are.
            func put(_ value: some FixedWidthInteger) {
                buffer.storeBytes(of: value, toByteOffset: at, as: type(of: value))
                at += MemoryLayout.size(ofValue: value)
            }
            /// `struct rtattr`, then its value; `at` moves past the padding.
            func attribute(_ type: UInt32, _ value: IPAddress) {
                put(UInt16(4 + value.count))
                put(UInt16(type))
                value.withUnsafeBytes { for byte in $0 { put(byte) } }
                at += (4 - value.count % 4) % 4
            }
            func attribute(_ type: UInt32, _ value: some FixedWidthInteger) {
                let size = MemoryLayout.size(ofValue: value)
                put(UInt16(4 + size))
                put(UInt16(type))
                put(value)
                at += (4 - size % 4) % 4
            }
            // struct nlmsghdr
            put(UInt32(length))
            put(UInt16(RTM_GETROUTE))
            put(UInt16(NLM_F_REQUEST))
            put(sequence)
            put(port)
            // struct rtmsg: family, dst_len, src_len, then tos, table,
            // protocol, scope and type (all 0), and flags.
            put(UInt8(destination.family == .ipv4 ? AF_INET : AF_INET6))
            put(UInt8(destination.count * 8))
            put(UInt8((source?.count ?? 0) * 8))
            at += 5
            // Without RTM_F_LOOKUP_TABLE the kernel answers an IPv4 lookup
            // with table `main` whichever table the route came from (as `ip
            // route get` knows).
            put(UInt32(RTM_F_LOOKUP_TABLE) | (matchingRoute ? UInt32(RTM_F_FIB_MATCH) : 0))
            attribute(RTA_DST.rawValue, destination)
            if let source { attribute(RTA_SRC.rawValue, source) }
            if let uid = query.uid { attribute(RTA_UID.rawValue, uid) }
            if let link = query.outputInterface {
                // The kernel reads 0 as no link at all: an index no link has
                // is asked as one it refuses.
                attribute(RTA_OIF.rawValue, link > 0 ? UInt32(exactly: link) ?? UInt32.max : UInt32.max)
            }
            if let port = query.tcpPort {
                attribute(RTA_IP_PROTO.rawValue, UInt8(IPPROTO_TCP))
                // Network byte order, as the kernel reads RTA_DPORT.
                attribute(RTA_DPORT.rawValue, port.bigEndian)
            }
        }
        // The length counted above is what was written: past it, the
        // stores above would have gone beyond the request's zeros.
        precondition(at == start + length, "a route request's length was miscounted")
    }

    /// `struct nlmsghdr` and `struct rtmsg`.
    private static let headerBytes = 16 + 12

    /// An attribute holding `size` bytes, padded to four.
    private static func attributeBytes(_ size: Int) -> Int { (4 + size + 3) & ~3 }
}
