import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// One client of the daemon. Its output holds at most the line being written
/// and the newest status behind it: a subscriber that stops reading costs two
/// lines of memory and is sent the newest state when it drains.
final class ClientConnection {
    /// The protocol's limit on a request line.
    static let requestLineLimit = 4096

    let fd: Int32
    private(set) var isSubscribed = false
    /// The client shut down its sending side (`echo ... | socat` does). A
    /// subscriber may still be reading; only a full hang-up ends it.
    private(set) var inputClosed = false
    private var input = LineBuffer(limit: requestLineLimit)
    /// The line being written and how much of it went out.
    private var writing: [UInt8] = []
    private var written = 0
    /// The newest line queued behind `writing`; a newer one replaces it.
    private var newest: [UInt8]?

    init(fd: Int32) {
        self.fd = fd
    }

    /// Whether the connection waits for the socket to become writable.
    var hasPendingOutput: Bool { written < writing.count }

    /// Nothing more will be asked and nothing is left to send.
    var isFinished: Bool { inputClosed && !isSubscribed && !hasPendingOutput }

    /// What to wait for: input until the client stops sending, writability while output is pending.
    var pollEvents: Int16 {
        Int16((inputClosed ? 0 : POLLIN) | (hasPendingOutput ? POLLOUT : 0))
    }

    enum ReadOutcome {
        /// Requests read (possibly none); `inputClosed` tells whether more can come.
        case requests([Result<ClientRequest, RequestError>])
        /// The socket failed.
        case failed
    }

    /// Reads what the client sent, without blocking.
    func readRequests() -> ReadOutcome {
        var results: [Result<ClientRequest, RequestError>] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 {
                inputClosed = true
                return .requests(results)
            }
            if count < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .requests(results)
                default: return .failed
                }
            }
            do {
                for line in try input.append(chunk[0..<count]) {
                    results.append(ClientRequest.parse(line))
                }
            } catch {
                results.append(.failure(RequestError(
                    "request line longer than \(Self.requestLineLimit) bytes; send one short JSON object per line")))
                return .requests(results)
            }
        }
    }

    func subscribe() { isSubscribed = true }

    /// Queues a status line. Returns `false` when the connection is broken.
    func send(_ line: [UInt8]) -> Bool {
        if hasPendingOutput {
            newest = line
            return true
        }
        writing = line
        written = 0
        return flush()
    }

    /// Writes as much as the socket takes. Returns `false` when the peer is gone.
    func flush() -> Bool {
        while true {
            while written < writing.count {
                let count = writing[written...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                if count < 0 {
                    switch errno {
                    case EINTR: continue
                    case EAGAIN, EWOULDBLOCK: return true
                    default: return false
                    }
                }
                written += count
            }
            guard let next = newest else { return true }
            newest = nil
            writing = next
            written = 0
        }
    }
}
