internal import CNetlink
#if canImport(Glibc)
import Glibc
#endif

/// The kernel's neighbour notifications (RTNLGRP_NEIGH), on a socket of
/// their own, filtered in the kernel: on a busy link entries move between
/// reachable, stale, delay and probe all the time, and a daemon woken by
/// each would not be idle. A socket filter lets through only what is
/// asked for: entries that turned `FAILED` (the next hop stopped answering
/// address resolution), and, while ``wantsReachable``, entries that turned
/// `REACHABLE` (one came back). Everything else is dropped before it is
/// queued, so an idle daemon on a working network is never woken by it.
package final class NeighbourEventSocket {
    private let socket: NetlinkSocket

    /// Whether entries that turn `REACHABLE` are let through, beside the `FAILED` ones.
    package private(set) var wantsReachable = false

    /// A lost notification loses a hint, never state: the check's own
    /// schedule still runs. A small queue is enough.
    static let receiveBufferBytes: Int32 = 64 * 1024

    package init() throws(NetlinkError) {
        socket = try NetlinkSocket(sequenceChecks: false)
        try libnl("subscribe to rtnetlink group \(RTNLGRP_NEIGH.rawValue)",
                  nl_socket_add_membership(socket.handle, Int32(RTNLGRP_NEIGH.rawValue)))
        try libnl("set the receive buffer size", nl_socket_set_buffer_size(socket.handle, Self.receiveBufferBytes, 0))
        try libnl("make the socket non-blocking", nl_socket_set_nonblocking(socket.handle))
        try attachFilter(reachable: false)
    }

    package var fileDescriptor: Int32 { socket.fileDescriptor }

    /// Lets entries that turn `REACHABLE` through as well, or no longer.
    package func letThroughReachable(_ reachable: Bool) throws(NetlinkError) {
        guard reachable != wantsReachable else { return }
        try attachFilter(reachable: reachable)
    }

    /// Asks the kernel for `address`'s entry on link `interfaceIndex` as it
    /// is now (RTM_GETNEIGH). The answer is queued as a notification would
    /// be, and passes the same filter: a caller that has just let
    /// `REACHABLE` through learns of an entry that turned so before it did,
    /// whose notification the old filter dropped. No entry, or a kernel
    /// older than 4.20 that cannot answer, replies with an error frame the
    /// filter drops: nothing is told, as nothing changed.
    package func ask(about address: IPAddress, interfaceIndex: Int) throws(NetlinkError) {
        guard let message = nlmsg_alloc_simple(Int32(RTM_GETNEIGH), 0) else {
            throw NetlinkError("allocate a neighbour request", libnlCode: -NLE_NOMEM)
        }
        defer { nlmsg_free(message) }
        var header = ndmsg()
        header.ndm_family = UInt8(address.family == .ipv4 ? AF_INET : AF_INET6)
        header.ndm_ifindex = Int32(interfaceIndex)
        try libnl("build a neighbour request",
                  nlmsg_append(message, &header, MemoryLayout<ndmsg>.size, Int32(NLMSG_ALIGNTO)))
        try libnl("build a neighbour request", address.withUnsafeBytes {
            nla_put(message, Int32(NDA_DST), Int32($0.count), $0.baseAddress)
        })
        _ = try socket.send(message, operation: "ask for a neighbour entry")
    }

    /// The entries queued, up to `maxDatagrams` reads.
    package func read(maxDatagrams: Int = 64) throws(NetlinkError) -> [NeighbourRecord] {
        try socket.readHints(maxDatagrams: maxDatagrams, NetlinkDecoder.neighbour(in:))
    }

    /// A classic BPF program over each notification (one message each):
    /// an IPv4 or IPv6 RTM_NEWNEIGH whose `ndm_state` has a wanted bit, else
    /// dropped. It
    /// reads single bytes, the low ones of `nlmsg_type` and `ndm_state`
    /// (host order), so it holds on either byte order.
    private func attachFilter(reachable: Bool) throws(NetlinkError) {
        let littleEndian = UInt16(1).littleEndian == 1
        // nlmsghdr: nlmsg_type at 4; ndmsg after the 16-byte header: ndm_state at 16 + 8.
        let typeLow: UInt32 = littleEndian ? 4 : 5
        let stateLow: UInt32 = littleEndian ? 24 : 25
        let wanted = UInt32(NUD_FAILED) | (reachable ? UInt32(NUD_REACHABLE) : 0)
        let loadByte = UInt16(BPF_LD | BPF_B | BPF_ABS)
        let jumpIfEqual = UInt16(BPF_JMP | BPF_JEQ | BPF_K)
        // Jumps count the instructions skipped; 8 is the drop at the end.
        let program = [
            /* 0 */ sock_filter(code: loadByte, jt: 0, jf: 0, k: typeLow),
            /* 1 */ sock_filter(code: jumpIfEqual, jt: 0, jf: 6, k: UInt32(RTM_NEWNEIGH)),
            // ndm_family: IP neighbours only, never a bridge's forwarding entries (AF_BRIDGE).
            /* 2 */ sock_filter(code: loadByte, jt: 0, jf: 0, k: 16),
            /* 3 */ sock_filter(code: jumpIfEqual, jt: 1, jf: 0, k: UInt32(AF_INET)),
            /* 4 */ sock_filter(code: jumpIfEqual, jt: 0, jf: 3, k: UInt32(AF_INET6)),
            /* 5 */ sock_filter(code: loadByte, jt: 0, jf: 0, k: stateLow),
            /* 6 */ sock_filter(code: UInt16(BPF_JMP | BPF_JSET | BPF_K), jt: 0, jf: 1, k: wanted),
            /* 7 */ sock_filter(code: UInt16(BPF_RET | BPF_K), jt: 0, jf: 0, k: UInt32.max),
            /* 8 */ sock_filter(code: UInt16(BPF_RET | BPF_K), jt: 0, jf: 0, k: 0),
        ]
        try socket.attach(filter: program, "attach the neighbour filter")
        wantsReachable = reachable
    }
}
