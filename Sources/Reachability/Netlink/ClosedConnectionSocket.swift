internal import CNetlink
#if canImport(Glibc)
import Glibc
#endif

/// The kernel's word of each TCP connection of this network namespace that
/// ends (`NETLINK_SOCK_DIAG`, the groups `ss -E` listens to; any user may
/// join them), filtered in the kernel: a host closes connections all the
/// time, and a daemon woken by each would not be idle. A socket filter lets
/// through the connections that failed (``ClosedConnection/Outcome/failed``)
/// and, while ``wantsAnswered``, those that were answered; the rest is
/// dropped before it is queued.
///
/// With the route each peer's packets took (``routes(of:)``): the kernel's
/// lookup, asked for the few that pass the filter.
package final class ClosedConnectionSocket {
    private let socket: NetlinkSocket
    private let lookups: NetlinkQuerySocket

    /// Whether answered connections are let through, beside the failed ones.
    package private(set) var wantsAnswered = false

    /// A lost notification loses a piece of evidence, never state: the
    /// check's own schedule still runs. A small queue is enough.
    static let receiveBufferBytes: Int32 = 64 * 1024

    /// Whether the kernel filters; without (`make bench`'s measure of what
    /// it saves), every connection's end is read.
    private let filtered: Bool

    package init(filtered: Bool = true) throws(NetlinkError) {
        self.filtered = filtered
        socket = try NetlinkSocket(sequenceChecks: false, family: NETLINK_SOCK_DIAG)
        for group in [SKNLGRP_INET_TCP_DESTROY, SKNLGRP_INET6_TCP_DESTROY] {
            try libnl("join the TCP destroy group \(group.rawValue)", nl_socket_add_membership(socket.handle, Int32(group.rawValue)))
        }
        try libnl("set the receive buffer size", nl_socket_set_buffer_size(socket.handle, Self.receiveBufferBytes, 0))
        try libnl("make the socket non-blocking", nl_socket_set_nonblocking(socket.handle))
        lookups = try NetlinkQuerySocket(receiveBufferBytes: Self.receiveBufferBytes)
        if filtered { try attachFilter(answered: false) }
    }

    package var fileDescriptor: Int32 { socket.fileDescriptor }

    /// Lets answered connections through as well, or no longer.
    package func letThroughAnswered(_ answered: Bool) throws(NetlinkError) {
        guard filtered, answered != wantsAnswered else { return }
        try attachFilter(answered: answered)
    }

    /// The connections queued, up to `maxDatagrams` reads.
    package func read(maxDatagrams: Int = 64) throws(NetlinkError) -> [ClosedConnection] {
        try socket.readHints(maxDatagrams: maxDatagrams, ClosedConnection.decode)
    }

    /// Where packets to each peer from its source go, as the kernel routes
    /// them: the output link and the gateway (`nil` on-link); `nil` where
    /// there is no unicast route, or the answer was lost.
    package func routes(
        of connections: [(peer: IPAddress, source: IPAddress)]
    ) throws(NetlinkError) -> [(interface: Int, gateway: IPAddress?)?] {
        try lookups.lookupRoutes(connections.map { RouteQuery($0.peer, source: $0.source) }).map { answer in
            guard case .route(.unicast, let interface, let gateway, _, _, _)? = answer else { return nil }
            return (interface, gateway)
        }
    }

    /// A classic BPF program over each message (one per datagram): a
    /// SOCK_DIAG_BY_FAMILY message whose `tcp_info` says it sent and
    /// received nothing, or ended retransmitting unacknowledged data (and,
    /// with `answered`, any that sent), else dropped. It finds
    /// `INET_DIAG_INFO` with the kernel's own attribute search
    /// (SKF_AD_NLATTR), so the attributes before it may change. Words are
    /// only compared with zero, so the byte order of BPF's loads does not
    /// matter; the type is read by its low byte, which holds on either order.
    private func attachFilter(answered: Bool) throws(NetlinkError) {
        try socket.attach(filter: Self.filter(answered: answered), "attach the closed-connection filter")
        wantsAnswered = answered
    }

    /// Where a test of the filter goes next.
    private enum Branch { case next, accept, drop }

    /// The program, its jumps resolved from ``Branch``es: each counts the
    /// instructions it skips.
    static func filter(answered: Bool) -> [sock_filter] {
        let littleEndian = UInt16(1).littleEndian == 1
        let info = UInt32(4)  // an attribute's payload follows its 4-byte header
        typealias Step = (code: Int32, k: UInt32, yes: Branch, no: Branch)
        let ifZero = { (yes: Branch, no: Branch) -> Step in (BPF_JMP | BPF_JEQ | BPF_K, 0, yes, no) }
        let steps: [Step] = [
            (BPF_LD | BPF_B | BPF_ABS, littleEndian ? 4 : 5, .next, .next),  // nlmsg_type's low byte
            (BPF_JMP | BPF_JEQ | BPF_K, UInt32(SOCK_DIAG_BY_FAMILY), .next, .drop),
            // The kernel's nla_find from offset A for the attribute of type X.
            (BPF_LD | BPF_IMM, UInt32(NetlinkFrame.headerLength) + cnl_inet_diag_msg_size(), .next, .next),
            (BPF_LDX | BPF_IMM, UInt32(INET_DIAG_INFO), .next, .next),
            (BPF_LD | BPF_W | BPF_ABS, cnl_skf_ad_nlattr(), .next, .next),  // A = INET_DIAG_INFO's offset, or 0
            ifZero(.drop, .next),
            (BPF_MISC | BPF_TAX, 0, .next, .next),
            (BPF_LD | BPF_W | BPF_IND, info + ClosedConnection.TCPInfoOffset.segmentsOut, .next, .next),
            ifZero(.drop, answered ? .accept : .next),
            (BPF_LD | BPF_W | BPF_IND, info + ClosedConnection.TCPInfoOffset.segmentsIn, .next, .next),
            ifZero(.accept, .next),
            (BPF_LD | BPF_B | BPF_IND, info + ClosedConnection.TCPInfoOffset.retransmits, .next, .next),
            ifZero(.drop, .next),
            (BPF_LD | BPF_W | BPF_IND, info + ClosedConnection.TCPInfoOffset.unacknowledged, .next, .next),
            ifZero(.drop, .accept),
        ]
        let accept = steps.count, drop = steps.count + 1
        func skip(_ branch: Branch, from index: Int) -> UInt8 {
            switch branch {
            case .next: 0
            case .accept: UInt8(accept - index - 1)
            case .drop: UInt8(drop - index - 1)
            }
        }
        return steps.enumerated().map { index, step in
            sock_filter(code: UInt16(step.code), jt: skip(step.yes, from: index), jf: skip(step.no, from: index), k: step.k)
        } + [
            sock_filter(code: UInt16(BPF_RET | BPF_K), jt: 0, jf: 0, k: UInt32.max),
            sock_filter(code: UInt16(BPF_RET | BPF_K), jt: 0, jf: 0, k: 0),
        ]
    }
}
