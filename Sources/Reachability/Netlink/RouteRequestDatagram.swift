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
        let destination = query.destination
        let source = query.source.flatMap { $0.family == destination.family ? $0 : nil }
        // Its length first, then the bytes written in place over zeros:
        // what is not written (the padding, rtmsg's unused fields) is zero.
        var length = Self.headerBytes + Self.attributeBytes(destination.bytes.count)
        if let source { length += Self.attributeBytes(source.bytes.count) }
        if query.uid != nil { length += Self.attributeBytes(4) }
        if query.outputInterface != nil { length += Self.attributeBytes(4) }
        if query.tcpPort != nil { length += Self.attributeBytes(1) + Self.attributeBytes(2) }
        var at = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: length))
        bytes.withUnsafeMutableBytes { buffer in
            // Host order, as netlink's headers and integer attributes are.
            func put<Value>(_ value: Value) {
                buffer.storeBytes(of: value, toByteOffset: at, as: Value.self)
                at += MemoryLayout<Value>.size
            }
            func put(_ value: [UInt8]) {
                for byte in value {
                    buffer[at] = byte
                    at += 1
                }
            }
            /// `struct rtattr`, then its value; `at` moves past the padding.
            func attribute(_ type: UInt32, _ write: () -> Void, size: Int) {
                put(UInt16(4 + size))
                put(UInt16(type))
                write()
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
            put(UInt8(destination.bytes.count * 8))
            put(UInt8((source?.bytes.count ?? 0) * 8))
            at += 5
            // Without RTM_F_LOOKUP_TABLE the kernel answers an IPv4 lookup
            // with table `main` whichever table the route came from (as `ip
            // route get` knows).
            put(UInt32(RTM_F_LOOKUP_TABLE) | (matchingRoute ? UInt32(RTM_F_FIB_MATCH) : 0))
            attribute(RTA_DST.rawValue, { put(destination.bytes) }, size: destination.bytes.count)
            if let source { attribute(RTA_SRC.rawValue, { put(source.bytes) }, size: source.bytes.count) }
            if let uid = query.uid { attribute(RTA_UID.rawValue, { put(uid) }, size: 4) }
            if let link = query.outputInterface {
                // The kernel reads 0 as no link at all: an index no link has
                // is asked as one it refuses.
                let index = link > 0 ? UInt32(exactly: link) ?? UInt32.max : UInt32.max
                attribute(RTA_OIF.rawValue, { put(index) }, size: 4)
            }
            if let port = query.tcpPort {
                attribute(RTA_IP_PROTO.rawValue, { put(UInt8(IPPROTO_TCP)) }, size: 1)
                // Network byte order, as the kernel reads RTA_DPORT.
                attribute(RTA_DPORT.rawValue, { put(port.bigEndian) }, size: 2)
            }
        }
        sequences.append(sequence)
    }

    /// `struct nlmsghdr` and `struct rtmsg`.
    private static let headerBytes = 16 + 12

    /// An attribute holding `size` bytes, padded to four.
    private static func attributeBytes(_ size: Int) -> Int { (4 + size + 3) & ~3 }
}
