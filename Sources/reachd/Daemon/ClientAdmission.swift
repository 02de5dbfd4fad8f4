import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// Accepts connections on the daemon's listening socket and admits them to
/// the ``ClientTable``, or answers `too_many_clients` and closes them: beyond
/// the client limits, per user, and when the daemon is out of descriptors.
final class ClientAdmission {
    /// Connections accepted per wake-up, so a connect flood waits its turn too.
    static let acceptsPerWakeup = 64

    let listener: ListeningSocket
    private let limits: ClientLimits
    private let logger: Logger
    /// Held open so that, out of descriptors, one can be freed to accept a
    /// connection and answer it `too_many_clients` rather than leave it queued
    /// (the trick dbus-broker and libevent servers use).
    private var spareDescriptor: Int32
    /// Out of descriptors even with the spare: the listener is not waited on,
    /// as it would stay readable and spin the loop, until a client leaves.
    private(set) var isPaused = false
    /// Refusals are logged once until a client leaves, not once per attempt.
    private var refusalLogged = false

    init(listener: ListeningSocket, limits: ClientLimits, logger: Logger) {
        self.listener = listener
        self.limits = limits
        self.logger = logger
        spareDescriptor = Self.openSpareDescriptor()
    }

    deinit {
        if spareDescriptor >= 0 { close(spareDescriptor) }
    }

    /// Accepts up to ``acceptsPerWakeup`` connections into `clients`, and
    /// returns the ones admitted.
    func acceptWaiting(into clients: ClientTable, _ now: ContinuousClock.Instant) -> [ClientConnection] {
        var admitted: [ClientConnection] = []
        for _ in 0..<Self.acceptsPerWakeup {
            let fd = UnixSocket.accept(from: listener.fd)
            guard fd >= 0 else {
                switch errno {
                case EINTR, ECONNABORTED:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    return admitted
                case EMFILE, ENFILE:
                    guard refuseWithSpareDescriptor() else { return admitted }
                    continue
                case let failure:
                    logger.warning("accept failed; pausing new connections until a client leaves",
                                   metadata: ["error": "\(SystemError("accept", errno: failure))"])
                    isPaused = true
                    return admitted
                }
            }
            // A peer whose credentials cannot be read shares one anonymous bucket.
            let user = UnixSocket.peerUser(fd) ?? UInt32.max
            if let refusal = clients.refusal(for: user, limits: limits) {
                refuse(fd, refusal, user: user)
            } else {
                admitted.append(clients.insert(fd: fd, user: user, now: now))
            }
        }
        return admitted
    }

    /// A client left: there is room again, and the next refusal is news.
    func clientLeft() {
        isPaused = false
        refusalLogged = false
    }

    /// Out of descriptors: frees the spare to accept one connection, answers it
    /// `too_many_clients`, and takes the spare back. Returns `false` when that
    /// is not possible either, and accepting pauses until a client leaves.
    private func refuseWithSpareDescriptor() -> Bool {
        guard spareDescriptor >= 0 else {
            logger.warning("out of file descriptors; pausing new connections until a client leaves")
            isPaused = true
            return false
        }
        close(spareDescriptor)
        let fd = UnixSocket.accept(from: listener.fd)
        if fd >= 0 {
            refuse(fd, "the daemon is out of file descriptors; try again later", user: UnixSocket.peerUser(fd))
        }
        spareDescriptor = Self.openSpareDescriptor()
        return fd >= 0
    }

    /// Connections refused since the daemon started, for the metrics.
    private(set) var refusedCount = 0

    /// Answers `too_many_clients` and closes. The line fits in a new socket's
    /// empty buffer, so the write never blocks.
    private func refuse(_ fd: Int32, _ message: String, user: UInt32?) {
        refusedCount += 1
        if !refusalLogged {
            logger.warning("refusing connections", metadata: ["reason": "\(message)", "client.user": "\(user.map(String.init) ?? "?")"])
            refusalLogged = true
        }
        let line = DaemonMessage.error(code: "too_many_clients", message: message).line()
        _ = line.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        close(fd)
    }

    private static func openSpareDescriptor() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
}
