internal import CNetlink
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection of the host's as the kernel tells its end (the
/// sock_diag destroy groups): where it went, and whether anything came
/// back. Evidence about the path it took, for a moment, never kept.
package struct ClosedConnection: Sendable, Hashable {
    /// How the connection went, from its `tcp_info` counters.
    package enum Outcome: Sendable, Hashable {
        /// It sent and nothing came back: no segment at all (a SYN never
        /// answered), or it ended in retransmission timeouts with data
        /// unacknowledged since (a path that died under it).
        case failed
        /// The peer answered: a segment came back (a refusal included, as
        /// a refusal crossed the path).
        case answered
    }

    /// The peer's address; an IPv4-mapped IPv6 peer is an IPv4 one, as its packets are.
    package var peer: IPAddress
    /// The connection's own address.
    package var source: IPAddress
    package var outcome: Outcome

    package init(peer: IPAddress, source: IPAddress, outcome: Outcome) {
        self.peer = peer
        self.source = source
        self.outcome = outcome
    }

    package var family: AddressFamily { peer.family }

    /// Where `struct tcp_info`'s counters sit: its layout is the kernel's
    /// ABI, only ever appended to. Written out because neither header can
    /// be imported: glibc's `netinet/tcp.h` stops before the segment
    /// counters (Linux 4.2), and the kernel's `linux/tcp.h` redefines
    /// glibc's types beside it.
    enum TCPInfoOffset {
        static let retransmits: UInt32 = 2
        static let unacknowledged: UInt32 = 24
        static let segmentsOut: UInt32 = 136
        static let segmentsIn: UInt32 = 140
    }

    /// The rule, from `tcp_info`: the socket filter of
    /// ``ClosedConnectionSocket`` lets through what this calls `failed`
    /// (and `answered` only while asked), and is judged by it; `nil` for a
    /// socket that never sent (a listener's).
    static func outcome(segmentsOut: UInt32, segmentsIn: UInt32, retransmits: UInt8, unacknowledged: UInt32) -> Outcome? {
        guard segmentsOut > 0 else { return nil }
        if segmentsIn == 0 || (retransmits > 0 && unacknowledged > 0) { return .failed }
        return .answered
    }

    /// A SOCK_DIAG_BY_FAMILY message of the destroy groups: `inet_diag_msg`,
    /// then attributes, `INET_DIAG_INFO` among them. `nil` for anything
    /// else, a truncated message, or a `tcp_info` too old to count segments
    /// (before Linux 4.2).
    static func decode(_ frame: NetlinkFrame) -> ClosedConnection? {
        let headerEnd = NetlinkFrame.headerLength + Int(cnl_inet_diag_msg_size())
        guard frame.type == UInt16(SOCK_DIAG_BY_FAMILY), frame.bytes.count >= headerEnd else { return nil }
        let message = UnsafeRawBufferPointer(rebasing: frame.bytes[NetlinkFrame.headerLength...])
        let (source, peer): (IPAddress?, IPAddress?)
        // inet_diag_msg: family, state, timer, retrans, then the id: ports
        // (4 bytes), source (16), destination (16).
        switch Int32(message[0]) {
        case AF_INET:
            source = IPAddress(family: .ipv4, bytes: UnsafeRawBufferPointer(rebasing: message[8..<12]))
            peer = IPAddress(family: .ipv4, bytes: UnsafeRawBufferPointer(rebasing: message[24..<28]))
        case AF_INET6:
            source = Self.unmapped(UnsafeRawBufferPointer(rebasing: message[8..<24]))
            peer = Self.unmapped(UnsafeRawBufferPointer(rebasing: message[24..<40]))
        default:
            return nil
        }
        guard let source, let peer, let info = Self.attribute(Int(INET_DIAG_INFO), in: frame.bytes, from: headerEnd) else {
            return nil
        }
        guard info.count >= Int(TCPInfoOffset.segmentsIn) + 4 else { return nil }
        let outcome = Self.outcome(
            segmentsOut: info.loadUnaligned(fromByteOffset: Int(TCPInfoOffset.segmentsOut), as: UInt32.self),
            segmentsIn: info.loadUnaligned(fromByteOffset: Int(TCPInfoOffset.segmentsIn), as: UInt32.self),
            retransmits: info[Int(TCPInfoOffset.retransmits)],
            unacknowledged: info.loadUnaligned(fromByteOffset: Int(TCPInfoOffset.unacknowledged), as: UInt32.self))
        return outcome.map { ClosedConnection(peer: peer, source: source, outcome: $0) }
    }

    /// The payload of the first attribute of `type` after `offset`, each
    /// length checked against the message's (``NetlinkAttributes``).
    private static func attribute(_ type: Int, in bytes: UnsafeRawBufferPointer, from offset: Int) -> UnsafeRawBufferPointer? {
        NetlinkAttributes(UnsafeRawBufferPointer(rebasing: bytes[offset...])).first { Int($0.type) == type }?.payload
    }

    /// An IPv6 address, or the IPv4 one it maps (`::ffff:a.b.c.d`).
    private static func unmapped(_ bytes: UnsafeRawBufferPointer) -> IPAddress? {
        if bytes.starts(with: mappedPrefix) {
            return IPAddress(family: .ipv4, bytes: UnsafeRawBufferPointer(rebasing: bytes[12...]))
        }
        return IPAddress(family: .ipv6, bytes: bytes)
    }

    private static let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xff, 0xff]
}
