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
    /// Out of descriptors, a connection is refused with the spare, or the
    /// listener is paused: it is not waited on, as it would stay readable and
    /// spin the loop, until a client leaves or a second passes.
    let acceptor: Acceptor
    private let limits: ClientLimits
    private let logger: Logger
    /// Refusals are logged once until a client leaves, not once per attempt.
    private var refusalLogged = false
    /// Connections refused since the daemon started, for the metrics.
    private(set) var refusedCount = 0

    /// The daemon's network namespace; `nil` where it cannot be named.
    private let network: NetworkNamespace?

    init(listener: ListeningSocket, limits: ClientLimits, network: NetworkNamespace?, logger: Logger) {
        self.listener = listener
        self.limits = limits
        self.network = network
        self.logger = logger
        acceptor = Acceptor(listener: listener.fd)
    }

    /// Accepts up to ``acceptsPerWakeup`` connections into `clients`, and
    /// returns the ones admitted.
    func acceptWaiting(into clients: ClientTable, _ now: ContinuousClock.Instant) -> [ClientConnection] {
        var admitted: [ClientConnection] = []
        for _ in 0..<Self.acceptsPerWakeup {
            switch acceptor.next(now: now) {
            case .drained:
                return admitted
            case .paused(let failure):
                logger.warning("cannot accept connections; pausing them until a client leaves",
                               metadata: ["error": "\(failure)"])
                return admitted
            case .refuse(let fd):
                refuse(fd, "the daemon is out of file descriptors; try again later", user: UnixSocket.peerUser(fd))
            case .connection(let fd):
                // A peer whose credentials cannot be read shares one anonymous bucket.
                let user = UnixSocket.peerUser(fd) ?? UInt32.max
                if let refusal = clients.refusal(for: user, limits: limits) {
                    refuse(fd, refusal, user: user)
                } else {
                    // Where nothing tells (a kernel before 5.14 and a peer
                    // whose /proc this daemon cannot read), answered.
                    let ofThisNetwork = network?.hasPeer(on: fd) ?? true
                    admitted.append(clients.insert(fd: fd, user: user, ofThisNetwork: ofThisNetwork, now: now))
                }
            }
        }
        return admitted
    }

    /// Accepts again (a client left, so there is room; or the pause is
    /// over), and the next refusal is news.
    func resume() {
        acceptor.resume()
        refusalLogged = false
    }

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
}
