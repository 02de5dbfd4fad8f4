#if canImport(Glibc)
import Glibc
#endif

/// One connection to a daemon, owned by one thread: a connect bounded by a
/// timeout, requests written whole, lines read as they come. Closed when the
/// last reference goes.
final class DaemonConnection {
    /// A healthy daemon accepts and answers in well under a millisecond; one
    /// that takes longer is stopped, overloaded or refusing, and a client
    /// gives up on it after this.
    static let answerTimeout: Duration = .seconds(1)
    /// Longest line accepted from the daemon; a status with hundreds of
    /// interfaces stays far below it.
    static let lineLimit = 16 * 1024 * 1024

    let path: String
    let fd: Int32
    /// Bytes read so far, complete lines or not.
    private(set) var bytesReceived = 0
    private var lines = LineBuffer(limit: lineLimit)
    /// The receive buffer, allocated once rather than per read.
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    /// Connects within `timeout` (see ``UnixSocket/connect(to:timeout:)``),
    /// which stays set for sending: a full listen queue blocks the connect,
    /// and a daemon with a full queue is as good as silent. A daemon at a
    /// default path is judged on the connected socket, before anything is
    /// sent: the user it runs as (`SO_PEERCRED`, the listener's), not the
    /// file's owner, which could change between a look at the path and the
    /// connect.
    init(path: String, timeout: Duration) throws(DaemonClientError) {
        self.path = path
        do {
            fd = try UnixSocket.connect(to: path, timeout: timeout)
        } catch {
            switch error.errno {
            case ENOENT, ECONNREFUSED, ENOTSOCK: throw .notRunning(path: path, cause: error)
            case EAGAIN: throw .timedOut(path: path, timeout: timeout)
            default: throw .connectionFailed(path: path, cause: error)
            }
        }
        if let peer = SocketPath.untrustedPeer(at: path, running: UnixSocket.peerUser(fd)) {
            close(fd)
            throw .untrustedOwner(path: path, owner: peer)
        }
    }

    deinit { close(fd) }

    /// The network namespace this connection was made in, as its socket's
    /// cookie and the thread's /proc tell it: what a daemon's status is
    /// compared with.
    var ownNetwork: NetworkNamespace? { NetworkNamespace.current(socket: fd) }

    /// Takes a daemon's status as an answer only when it describes `ours`:
    /// a socket path reaches across namespaces, and another network's daemon
    /// answers for another network. A status that names none (or none that
    /// reads) proves nothing. Pure: ``DaemonLink`` asks it with the
    /// namespace its reader read.
    static func checkServes(_ status: NetworkStatus, network ours: NetworkNamespace?, path: String) throws(DaemonClientError) {
        guard let theirs = status.network else { throw .unnamedNetwork(path: path) }
        guard !theirs.isSameNetwork(as: ours) else { return }
        throw .otherNetwork(path: path)
    }

    /// Several requests in one write: one system call, and a daemon that
    /// answers the first and hangs up finds the rest already sent (no EPIPE
    /// that would hide its answer). Bounded by the connect timeout.
    func send(_ requests: [ClientRequest]) throws(DaemonClientError) {
        do { try UnixSocket.writeAll(fd, requests.flatMap(\.line)) } catch {
            // A daemon refusing a connection answers and closes at once, maybe
            // before the request is written: its answer says more than EPIPE.
            if let lines = try? readAvailable(), let line = lines.last,
                case .error(let code, let message, _)? = try? DaemonMessage.decode(line)
            {
                throw .rejected(code: code, message: message)
            }
            throw .connectionFailed(path: path, cause: error)
        }
    }

    /// Bytes the kernel holds for this connection, not read yet; `nil` when
    /// it won't say.
    var queuedBytes: Int? {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? Int(count) : nil
    }

    /// The complete lines that have arrived, in order, without waiting:
    /// empty when none has yet (a line's end still on its way), `nil` at the
    /// end of the stream.
    func readAvailable() throws(DaemonClientError) -> [[UInt8]]? {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { return [] }
                throw .connectionFailed(path: path, cause: SystemError("read"))
            }
            bytesReceived += count
            do {
                let complete = try lines.append(chunk[0..<count])
                // More may be queued behind a full chunk: the caller is told
                // only when the socket is drained or a line is whole.
                if !complete.isEmpty || count < chunk.count { return complete }
            } catch {
                throw .protocolError(.malformed("a line longer than \(Self.lineLimit) bytes"))
            }
        }
    }

    /// The next complete lines, waiting for them until `deadline`: throws
    /// `timedOut` (naming `timeout`, what the caller allowed) when it passes
    /// first; `nil` at the end of the stream. What already arrived counts
    /// even when the deadline has passed.
    func nextLines(by deadline: ContinuousClock.Instant, timeout: Duration) throws(DaemonClientError) -> [[UInt8]]? {
        while true {
            guard let complete = try readAvailable() else { return nil }
            if !complete.isEmpty { return complete }
            let ready: Bool
            do { ready = try PollSet.wait(for: fd, until: deadline) } catch {
                throw .connectionFailed(path: path, cause: error)
            }
            if !ready { throw .timedOut(path: path, timeout: timeout) }
        }
    }
}
