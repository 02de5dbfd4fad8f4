#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Talks to a running `reachd daemon` over its Unix socket.
///
/// Every call has a deadline: a daemon that is stopped, overloaded or refusing
/// costs a client at most `timeout` (one second by default), never a hang.
///
/// ```swift
/// let client = DaemonClient(socketPath: SocketPath.system)
/// let now = try client.fetchStatus()
/// for try await status in try client.statuses() {
///     print(status.reachability)
/// }
/// ```
public struct DaemonClient: Sendable {
    /// The daemon's socket this client talks to.
    public let socketPath: String
    /// How long a daemon may take to accept a connection and send the current
    /// status. A healthy daemon answers in well under a millisecond.
    public static let defaultTimeout: Duration = .seconds(1)
    /// Longest line accepted from the daemon; a status with hundreds of
    /// interfaces stays far below it.
    static let lineLimit = 16 * 1024 * 1024

    /// A client of the daemon listening at `socketPath` (``SocketPath/system`` for the system
    /// daemon). Nothing is connected until a call.
    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// Asks once. Connecting, asking and the answer together take at most
    /// `timeout`; after it the call throws ``DaemonClientError/timedOut(path:timeout:)``.
    public func fetchStatus(timeout: Duration = defaultTimeout) throws(DaemonClientError) -> NetworkStatus {
        try ask(.get, timeout: timeout).status
    }

    /// Sends one request and returns the status that answers it, and its line
    /// as received (what `reachd status --json` prints, so that keys a newer
    /// daemon adds and its exact timestamps survive); `.check` waits for the
    /// daemon's connectivity check.
    package func ask(_ request: ClientRequest, timeout: Duration) throws(DaemonClientError)
        -> (status: NetworkStatus, line: [UInt8])
    {
        let deadline = ContinuousClock.now + timeout
        let connection = try DaemonConnection(path: socketPath, timeout: timeout)
        defer { connection.close() }
        try connection.send(request)
        var reader = DaemonLineReader()
        guard let answer = try connection.nextStatus(&reader, deadline: deadline, timeout: timeout) else {
            throw .closed(path: socketPath)
        }
        return Self.inDetail(answer, request.detail)
    }

    /// A status as `detail` asked for it: a daemon that predates summaries
    /// answers every request in full, so the summary is made here, and its
    /// line re-encoded (what `--json` prints).
    static func inDetail(
        _ answer: (status: NetworkStatus, line: [UInt8]), _ detail: StatusDetail
    ) -> (status: NetworkStatus, line: [UInt8]) {
        guard detail == .summary, !answer.status.isSummary else { return answer }
        let summary = answer.status.summary()
        return (summary, Array(DaemonMessage.status(summary).line().dropLast()))
    }

    /// Subscribes: the current status first, then one per change the daemon
    /// publishes. Connecting happens now, so "not running" is thrown here; the
    /// current status must follow within `timeout` or the sequence ends with
    /// ``DaemonClientError/timedOut(path:timeout:)``. Changes are then awaited
    /// for as long as they take. Later failures end the sequence with an error.
    public func statuses(timeout: Duration = defaultTimeout) throws(DaemonClientError)
        -> AsyncThrowingStream<NetworkStatus, any Error>
    {
        let deadline = ContinuousClock.now + timeout
        let connection = try DaemonConnection(path: socketPath, timeout: timeout)
        try connection.send(.subscribe)
        let (stream, continuation) = Self.makeStream(for: connection)
        startDetachedThread {
            Self.follow(connection, firstLineBy: deadline, timeout: timeout, continuation) { first in
                switch first {
                case .success(let status): continuation.yield(status)
                case .failure(let error): continuation.finish(throwing: connection.isInterrupted ? nil : error)
                }
            }
        }
        return stream
    }

    private static func makeStream(for connection: DaemonConnection)
        -> (AsyncThrowingStream<NetworkStatus, any Error>, AsyncThrowingStream<NetworkStatus, any Error>.Continuation)
    {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: NetworkStatus.self, bufferingPolicy: .bufferingNewest(8))
        continuation.onTermination = { _ in connection.interrupt() }
        return (stream, continuation)
    }

    /// Reads a subscription to its end on the calling thread: the first status
    /// (due by `deadline`) to `first`, every later one into `continuation`.
    private static func follow(
        _ connection: DaemonConnection, firstLineBy deadline: ContinuousClock.Instant, timeout: Duration,
        _ continuation: AsyncThrowingStream<NetworkStatus, any Error>.Continuation,
        first: (Result<NetworkStatus, DaemonClientError>) -> Void
    ) {
        defer { connection.close() }
        var reader = DaemonLineReader()
        do throws(DaemonClientError) {
            guard let current = try connection.nextStatus(&reader, deadline: deadline, timeout: timeout) else {
                throw .closed(path: connection.path)
            }
            first(.success(current.status))
        } catch {
            first(.failure(error))
            continuation.finish(throwing: error)
            return
        }
        do throws(DaemonClientError) {
            while let next = try connection.nextStatus(&reader, deadline: nil, timeout: timeout) {
                continuation.yield(next.status)
            }
            continuation.finish(throwing: DaemonClientError.closed(path: connection.path))
        } catch {
            continuation.finish(throwing: connection.isInterrupted ? nil : error)
        }
    }

    /// The destination answer a line carries, with the position its id
    /// names among `count` destinations asked about (ids are positions);
    /// `nil` for a status, a line of a type this version does not know, or an
    /// id that names none. An error line is thrown.
    static func destinationAnswer(
        from line: [UInt8], among count: Int
    ) throws(DaemonClientError) -> (position: Int, status: DestinationStatus)? {
        let message: DaemonMessage
        do { message = try DaemonMessage.decode(line) } catch { throw .protocolError(error) }
        switch message {
        case .destination(let status):
            guard let id = status.id, let position = Int(id), (0..<count).contains(position) else { return nil }
            return (position, status)
        case .error(let code, let text):
            throw .rejected(code: code, message: text)
        case .status, .unrecognized:
            return nil
        }
    }

    /// The status a line carries; `nil` for a line of a type this version
    /// does not know, which the caller skips.
    static func status(from line: [UInt8]) throws(DaemonClientError) -> NetworkStatus? {
        let message: DaemonMessage
        do { message = try DaemonMessage.decode(line) } catch { throw .protocolError(error) }
        switch message {
        case .status(let status): return status
        case .error(let code, let text): throw .rejected(code: code, message: text)
        // A status stream carries no destination lines; skipped like an unknown type.
        case .destination, .unrecognized: return nil
        }
    }
}

/// Framing state of one connection's reading side, with its receive buffer
/// allocated once rather than per line.
/// A connection's partial lines and read buffer.
struct DaemonLineReader {
    var lines = LineBuffer(limit: DaemonClient.lineLimit)
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
}

/// One client connection. Its descriptor is closed exactly once, by whoever
/// owns the reading; `interrupt` from another thread only shuts it down, which
/// wakes a blocked `poll` or `recv` without racing a reuse of the number.
/// One connection to a daemon: a blocking connect bounded by a timeout, then lines.
final class DaemonConnection: Sendable {
    let path: String
    let fd: Int32
    private let state = Mutex((closed: false, interrupted: false))

    /// Connects within `timeout` (see ``UnixSocket/connect(to:timeout:)``).
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
    }

    /// A connection that has sent `request`, for a loop that awaits the
    /// answer with a deadline of its own. The connect is short: a full listen
    /// queue blocks it, and a daemon with a full queue is as good as silent.
    static func asking(path: String, _ request: ClientRequest) throws(DaemonClientError) -> DaemonConnection {
        let connection = try DaemonConnection(path: path, timeout: .milliseconds(100))
        do throws(DaemonClientError) {
            try connection.send(request)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    var isInterrupted: Bool { state.withLock { $0.interrupted } }

    /// Bounded by the connect timeout, which stays set for sending.
    func send(_ request: ClientRequest) throws(DaemonClientError) {
        try send([request])
    }

    /// Several requests in one write: one system call, and a daemon that
    /// answers the first and hangs up finds the rest already sent (no EPIPE
    /// that would hide its answer).
    func send(_ requests: [ClientRequest]) throws(DaemonClientError) {
        do { try UnixSocket.writeAll(fd, requests.flatMap(\.line)) } catch {
            // A daemon refusing a connection answers and closes at once, maybe
            // before the request is written: its answer says more than EPIPE.
            var reader = DaemonLineReader()
            if let line = try? nextLine(&reader, deadline: .now, timeout: .zero),
                case .error(let code, let message)? = try? DaemonMessage.decode(line)
            {
                throw .rejected(code: code, message: message)
            }
            throw .connectionFailed(path: path, cause: error)
        }
    }

    /// The next complete line, or `nil` at end of stream; throws `timedOut`
    /// when `deadline` passes first (`nil`: wait for ever). When one read brings
    /// several lines, the newest status or error wins: each status is complete,
    /// and a line of a type this version does not know must not hide one.
    func nextLine(
        _ reader: inout DaemonLineReader, deadline: ContinuousClock.Instant?, timeout: Duration
    ) throws(DaemonClientError) -> [UInt8]? {
        guard let pendingLines = try nextLines(&reader, deadline: deadline, timeout: timeout) else { return nil }
        // One line, the usual case, needs no scanning: the caller reads its type.
        guard pendingLines.count > 1 else { return pendingLines.first }
        return pendingLines.last { StatusUpdate.isStatusLine($0) || StatusUpdate.contains(Self.errorMarker, in: $0) }
            ?? pendingLines.last
    }

    /// Every complete line that one read brings, in order, or `nil` at end of
    /// stream: destination answers are each their own, none replaces another.
    func nextLines(
        _ reader: inout DaemonLineReader, deadline: ContinuousClock.Instant?, timeout: Duration
    ) throws(DaemonClientError) -> [[UInt8]]? {
        while true {
            if let deadline { try waitUntilReadable(by: deadline, timeout: timeout) }
            let count = reader.chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR { continue }
                throw .connectionFailed(path: path, cause: SystemError("read"))
            }
            do {
                let lines = try reader.lines.append(reader.chunk[0..<count])
                if !lines.isEmpty { return lines }
            } catch {
                throw .protocolError(.malformed("a line longer than \(DaemonClient.lineLimit) bytes"))
            }
        }
    }

    /// The next line that carries a status, with the status; lines of a type
    /// this version does not know are skipped, an error line is thrown, and
    /// the end of the stream is `nil`.
    func nextStatus(
        _ reader: inout DaemonLineReader, deadline: ContinuousClock.Instant?, timeout: Duration
    ) throws(DaemonClientError) -> (status: NetworkStatus, line: [UInt8])? {
        while let line = try nextLine(&reader, deadline: deadline, timeout: timeout) {
            if let status = try DaemonClient.status(from: line) { return (status, line) }
        }
        return nil
    }

    private static let errorMarker = Array(#""type":"error""#.utf8)

    /// Waits until a read will not block; what already arrived counts even
    /// when the deadline has passed.
    private func waitUntilReadable(by deadline: ContinuousClock.Instant, timeout: Duration) throws(DaemonClientError) {
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, pollMilliseconds(until: deadline))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw .connectionFailed(path: path, cause: SystemError("poll")) }
            if ready == 0, ContinuousClock.now >= deadline { throw .timedOut(path: path, timeout: timeout) }
        }
    }

    func interrupt() {
        state.withLock { state in
            guard !state.closed else { return }
            state.interrupted = true
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            Glibc.close(fd)
        }
    }
}
