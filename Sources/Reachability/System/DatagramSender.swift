#if canImport(Glibc)
import Glibc
#endif

/// Datagrams to one AF_UNIX socket (journald's, systemd's notify socket)
/// from one socket kept open, never waiting: a receiver that stops reading
/// (journald restarting, or under I/O pressure) fills its queue
/// (`net.unix.max_dgram_qlen`), and a blocking `sendto` would then hold the
/// daemon's loop. A datagram that finds no room is dropped and counted.
///
/// Each datagram is addressed by path, not sent on a connected socket, so a
/// receiver that restarts (a new socket at the same path) is reached at once.
package final class DatagramSender {
    package let path: String
    /// Opened with the first datagram: a daemon that never sends holds none.
    private var fd: Int32 = -1
    /// Datagrams dropped: the receiver's queue was full, or it was not there.
    package private(set) var dropped = 0

    package init(path: String) {
        self.path = path
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Sends `bytes` as one datagram; whether it went.
    @discardableResult
    package func send(_ bytes: [UInt8]) -> Bool {
        if fd < 0 {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        guard fd >= 0, UnixSocket.sendDatagram(bytes, to: path, from: fd) else {
            dropped += 1
            return false
        }
        return true
    }
}
