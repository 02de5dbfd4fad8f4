#if canImport(Glibc)
import Glibc
#endif

/// Datagrams to one AF_UNIX socket (journald's, systemd's notify socket)
/// from one connected socket kept open, never waiting: a receiver that stops
/// reading (journald restarting, or under I/O pressure) fills its queue
/// (`net.unix.max_dgram_qlen`: 10 where nothing raised it), and a blocking
/// send would then hold the daemon's loop.
///
/// A datagram that finds the queue full waits in a backlog of at most
/// `backlog` datagrams, in order, until the owner sees ``fileDescriptor``
/// writable and calls ``flush()``: a burst loses nothing. One that finds the
/// backlog full, or the receiver gone, is dropped and counted. A receiver
/// that restarted (a new socket at the same path) is connected to anew.
package final class DatagramSender {
    package let path: String
    private let backlogLimit: Int
    /// Connected with the first datagram: a daemon that never sends holds none.
    private var fd: Int32 = -1
    private var backlog: [[UInt8]] = []
    /// Datagrams dropped: the backlog was full, or the receiver was not there.
    package private(set) var dropped = 0
    /// Connections made so far: a new one is a new descriptor to wait on,
    /// whatever its number.
    package private(set) var connections = 0

    /// - Parameter backlog: datagrams held while the receiver's queue is
    ///   full; 0 drops each at once.
    package init(path: String, backlog: Int = 0) {
        self.path = path
        backlogLimit = backlog
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// The connected socket, to wait on for writing while ``isBacklogged``.
    package var fileDescriptor: Int32? { fd >= 0 ? fd : nil }
    /// Datagrams wait for room in the receiver's queue.
    package var isBacklogged: Bool { !backlog.isEmpty }

    /// Sends `bytes` as one datagram, or holds it behind those waiting;
    /// whether it was sent or held.
    @discardableResult
    package func send(_ bytes: [UInt8]) -> Bool {
        guard backlog.isEmpty else { return hold(bytes) }
        switch attempt(bytes) {
        case .sent: return true
        case .full: return hold(bytes)
        case .failed:
            dropped += 1
            return false
        }
    }

    /// Sends what waits, in order, until the receiver's queue is full again.
    package func flush() {
        while let first = backlog.first {
            switch attempt(first) {
            case .sent: backlog.removeFirst()
            case .full: return
            case .failed:
                backlog.removeFirst()
                dropped += 1
            }
        }
    }

    private func hold(_ bytes: [UInt8]) -> Bool {
        guard backlog.count < backlogLimit else {
            dropped += 1
            return false
        }
        backlog.append(bytes)
        return true
    }

    private enum Attempt {
        case sent, full, failed
    }

    private func attempt(_ bytes: [UInt8]) -> Attempt {
        // A second try only after connecting anew to a receiver that went.
        for firstTry in [true, false] {
            if fd < 0 {
                guard let connected = try? UnixSocket.connectDatagram(to: path) else { return .failed }
                fd = connected
                connections += 1
            }
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if sent == bytes.count { return .sent }
            let failure = sent < 0 ? errno : EMSGSIZE
            if failure == EAGAIN || failure == EINTR { return .full }
            close(fd)
            fd = -1
            guard firstTry, [ECONNREFUSED, ENOTCONN, ECONNRESET].contains(failure) else { return .failed }
        }
        return .failed
    }
}
