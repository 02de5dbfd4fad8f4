internal import CNetlink
#if canImport(Glibc)
import Glibc
#endif

/// An rtnetlink socket from libnl, with a reusable receive buffer.
///
/// Receiving is a plain `recv` on libnl's descriptor rather than `nl_recvmsgs`,
/// because reachd needs the raw datagram (to decode routes by type alone and to
/// record fixtures) and must see ENOBUFS as such, not as a generic `NLE_NOMEM`.
final class NetlinkSocket {
    enum Received {
        /// A datagram of this many bytes is in `buffer`.
        case datagram(UnsafeRawBufferPointer)
        /// Nothing queued (non-blocking sockets only).
        case wouldBlock
        /// The kernel dropped messages: the receive queue overran (ENOBUFS), or a
        /// datagram was larger than the buffer (which has grown for the next one).
        case overrun
    }

    let handle: OpaquePointer
    private var buffer: UnsafeMutableRawBufferPointer
    /// Datagrams sent: what a batch costs in system calls.
    private(set) var datagramsSent = 0

    /// - Parameter family: the netlink family: rtnetlink, or sock_diag for
    ///   the kernel's word of closed connections.
    init(sequenceChecks: Bool, family: Int32 = NETLINK_ROUTE) throws(NetlinkError) {
        guard let handle = nl_socket_alloc() else {
            throw NetlinkError("allocate a socket", libnlCode: -NLE_NOMEM)
        }
        self.handle = handle
        self.buffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        if !sequenceChecks { nl_socket_disable_seq_check(handle) }
        // Requests are answered by their reply or an error; libnl's automatic
        // ACK request would add a second message to every answer. The route
        // lookups written by hand (RouteRequestDatagram) ask for none either.
        nl_socket_disable_auto_ack(handle)
        try libnl(family == NETLINK_ROUTE ? "connect to rtnetlink" : "connect to netlink family \(family)", nl_connect(handle, family))
    }

    deinit {
        nl_socket_free(handle)
        buffer.deallocate()
    }

    var fileDescriptor: Int32 { nl_socket_get_fd(handle) }

    /// The next datagram from the kernel. Datagrams from any other sender are
    /// dropped unread, as systemd's sd-netlink drops them: the kernel already
    /// refuses an unprivileged process's unicast to our port, but a privileged
    /// one could otherwise feed the decoder made-up links and routes.
    /// `waiting: false` returns ``Received/wouldBlock`` at once where
    /// nothing is queued, whatever the socket's mode.
    func receive(waiting: Bool = true) throws(NetlinkError) -> Received {
        while true {
            var sender = sockaddr_nl()
            var senderLength = socklen_t(MemoryLayout<sockaddr_nl>.size)
            let count = withUnsafeMutablePointer(to: &sender) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(
                        fileDescriptor, buffer.baseAddress, buffer.count, Int32(MSG_TRUNC) | (waiting ? 0 : Int32(MSG_DONTWAIT)),
                        $0, &senderLength)
                }
            }
            if count >= 0, sender.nl_pid != 0 { continue }
            if count > buffer.count {
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
                buffer.deallocate()
                buffer = larger
                return .overrun
            }
            if count >= 0 { return .datagram(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case ENOBUFS: return .overrun
            case let other: throw NetlinkError("receive", errno: other)
            }
        }
    }

    /// Sends a message built with libnl, stamped with a fresh sequence
    /// number and completed as libnl completes a message it sends, and
    /// returns that number so that replies can be matched to it.
    func send(_ message: OpaquePointer, operation: @autoclosure () -> String) throws(NetlinkError) -> UInt32 {
        let header = nlmsg_hdr(message)!
        header.pointee.nlmsg_seq = nextSequence()
        nl_complete_msg(handle, message)
        try libnl(operation(), nl_sendto(handle, header, Int(header.pointee.nlmsg_len)))
        datagramsSent += 1
        return header.pointee.nlmsg_seq
    }

    /// Sends requests written by hand (``RouteRequestDatagram``) in one
    /// datagram: the kernel takes every request in it in turn and answers
    /// each on its own, so a batch costs one system call, not one per
    /// request. Their sequence numbers were taken with ``nextSequence()``.
    func send(_ datagram: [UInt8], operation: @autoclosure () -> String) throws(NetlinkError) {
        let sent = datagram.withUnsafeBytes { nl_sendto(handle, UnsafeMutableRawPointer(mutating: $0.baseAddress), $0.count) }
        try libnl(operation(), sent)
        datagramsSent += 1
    }

    /// A fresh sequence number, as libnl stamps a message it sends.
    func nextSequence() -> UInt32 { nl_socket_use_seq(handle) }

    /// The port the socket is bound to, which a request names as its sender.
    var localPort: UInt32 { nl_socket_get_local_port(handle) }

    /// Asks for a receive buffer of `bytes` and returns what the socket got,
    /// as SO_RCVBUF reads back (the kernel doubles it for its bookkeeping).
    /// SO_RCVBUFFORCE passes net.core.rmem_max but needs CAP_NET_ADMIN;
    /// without it, libnl's SO_RCVBUF gives what the sysctl allows.
    @discardableResult
    func setReceiveBuffer(_ bytes: Int32) throws(NetlinkError) -> Int {
        if !setOption(SOL_SOCKET, SO_RCVBUFFORCE, bytes) {
            try libnl("set the receive buffer size", nl_socket_set_buffer_size(handle, bytes, 0))
        }
        var got: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fileDescriptor, SOL_SOCKET, SO_RCVBUF, &got, &length) == 0 ? Int(got) : 0
    }

    /// What a socket of hints has queued (the neighbour entries, the
    /// closed connections), each message decoded by `decode`, up to
    /// `maxDatagrams` reads: a bounded amount per wake-up. An overrun is
    /// skipped: what it lost was a hint, never state.
    func readHints<Hint>(maxDatagrams: Int, _ decode: (NetlinkFrame) -> Hint?) throws(NetlinkError) -> [Hint] {
        var hints: [Hint] = []
        for _ in 0..<maxDatagrams {
            switch try receive() {
            case .datagram(let bytes):
                NetlinkFrame.forEach(in: bytes) { frame in
                    if let hint = decode(frame) { hints.append(hint) }
                }
            case .overrun:
                continue
            case .wouldBlock:
                return hints
            }
        }
        return hints
    }

    /// Replaces the socket's filter with `program`, classic BPF run over
    /// each message before it is queued.
    func attach(filter program: [sock_filter], _ operation: String) throws(NetlinkError) {
        var program = program
        let attached = program.withUnsafeMutableBufferPointer { instructions in
            var filter = sock_fprog(len: UInt16(instructions.count), filter: instructions.baseAddress)
            return setsockopt(
                fileDescriptor, SOL_SOCKET, SO_ATTACH_FILTER, &filter, socklen_t(MemoryLayout<sock_fprog>.size))
        }
        guard attached == 0 else { throw NetlinkError(operation, errno: errno) }
    }

    func setOption(_ level: Int32, _ name: Int32, _ value: some BitwiseCopyable) -> Bool {
        withUnsafeBytes(of: value) {
            setsockopt(fileDescriptor, level, name, $0.baseAddress, socklen_t($0.count)) == 0
        }
    }
}
