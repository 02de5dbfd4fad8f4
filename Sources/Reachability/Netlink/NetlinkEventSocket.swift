internal import CNetlink
#if canImport(Glibc)
import Glibc
#endif

/// The multicast side: a non-blocking socket subscribed to link, address, route
/// and rule notifications for both families.
final class NetlinkEventSocket {
    /// What one read of the socket produced.
    struct Batch {
        var events: [NetlinkEvent] = []
        /// Messages were lost: the caller must resynchronise from a dump.
        var overran = false
    }

    private let socket: NetlinkSocket
    /// Called with every datagram received, for recording fixtures.
    var trace: ((UnsafeRawBufferPointer) -> Void)?

    /// The receive buffer reachd asks for. libnl's default (32 KiB) loses
    /// notifications during a route burst; 1 MiB lost none in 200,000 inserts
    /// here, and four times that leaves room for a slower or busier machine.
    /// It is a cap, not an allocation: memory is used only while a burst is
    /// queued.
    static let receiveBufferBytes: Int32 = 4 * 1024 * 1024

    /// - Parameter receiveBufferBytes: what to ask for; a socket that only
    ///   needs to know that something happened (``DaemonLiveness``) needs
    ///   little, since an overrun says so too.
    init(receiveBufferBytes: Int32 = receiveBufferBytes) throws(NetlinkError) {
        socket = try NetlinkSocket(sequenceChecks: false)
        let groups = [
            RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
            RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE,
        ]
        for group in groups {
            try libnl("subscribe to rtnetlink group \(group.rawValue)",
                      nl_socket_add_membership(socket.handle, Int32(group.rawValue)))
        }
        // Whatever it got, overruns are resynced.
        try socket.setReceiveBuffer(receiveBufferBytes)
        try libnl("make the socket non-blocking", nl_socket_set_nonblocking(socket.handle))
    }

    var fileDescriptor: Int32 { socket.fileDescriptor }

    /// Reads what is queued, up to `maxDatagrams`, so that a continuous flood
    /// still yields regular evaluations instead of one endless batch.
    func read(maxDatagrams: Int) throws(NetlinkError) -> Batch {
        var batch = Batch()
        for _ in 0..<maxDatagrams {
            switch try socket.receive() {
            case .datagram(let bytes):
                trace?(bytes)
                NetlinkFrame.forEach(in: bytes) { batch.events.append(NetlinkDecoder.event(for: $0)) }
            case .wouldBlock:
                return batch
            case .overrun:
                batch.overran = true
                return batch
            }
        }
        return batch
    }

    /// Throws away everything queued. After an overrun the queue holds messages
    /// older than the dump that follows; replaying them after it could undo a
    /// change whose own notification was the one lost.
    func discardQueued() throws(NetlinkError) {
        while true {
            switch try socket.receive() {
            case .datagram, .overrun: continue
            case .wouldBlock: return
            }
        }
    }
}
