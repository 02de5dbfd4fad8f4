#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Talks to a running `reachd daemon` over its Unix socket.
///
/// ```swift
/// let client = DaemonClient(socketPath: SocketPath.system)
/// let now = try client.fetchStatus()
/// for try await status in try client.statuses() {
///     print(status.reachability)
/// }
/// ```
public struct DaemonClient: Sendable {
    public let socketPath: String
    /// Longest line accepted from the daemon; a status with hundreds of
    /// interfaces stays far below it.
    static let lineLimit = 16 * 1024 * 1024

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// Asks once and waits at most `timeoutSeconds` for the answer.
    public func fetchStatus(timeoutSeconds: Int = 5) throws(DaemonClientError) -> NetworkStatus {
        let connection = try Connection(path: socketPath)
        defer { connection.close() }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(connection.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        try connection.send(.get)
        var reader = LineReader()
        guard let line = try connection.nextLine(&reader) else { throw .closed(path: socketPath) }
        return try Self.status(from: line)
    }

    /// Subscribes: the current status first, then one per change the daemon
    /// publishes. Connecting happens now, so "not running" is thrown here;
    /// later failures end the sequence with an error.
    public func statuses() throws(DaemonClientError) -> AsyncThrowingStream<NetworkStatus, any Error> {
        let connection = try Connection(path: socketPath)
        try connection.send(.subscribe)
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: NetworkStatus.self, bufferingPolicy: .bufferingNewest(8))
        continuation.onTermination = { _ in connection.interrupt() }
        startDetachedThread {
            defer { connection.close() }
            var reader = LineReader()
            do {
                while let line = try connection.nextLine(&reader) {
                    continuation.yield(try Self.status(from: line))
                }
                continuation.finish(throwing: DaemonClientError.closed(path: connection.path))
            } catch {
                continuation.finish(throwing: connection.isInterrupted ? nil : error)
            }
        }
        return stream
    }

    private static func status(from line: [UInt8]) throws(DaemonClientError) -> NetworkStatus {
        let message: DaemonMessage
        do { message = try DaemonMessage.decode(line) } catch { throw .protocolError(error) }
        switch message {
        case .status(let status): return status
        case .error(let code, let text): throw .rejected(code: code, message: text)
        }
    }
}

/// Framing state of one connection's reading side, with its receive buffer
/// allocated once rather than per line.
private struct LineReader {
    var lines = LineBuffer(limit: DaemonClient.lineLimit)
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
}

/// One client connection. Its descriptor is closed exactly once, by whoever
/// owns the reading; `interrupt` from another thread only shuts it down, which
/// wakes a blocked `recv` without racing a reuse of the number.
private final class Connection: Sendable {
    let path: String
    let fd: Int32
    private let state = Mutex((closed: false, interrupted: false))

    init(path: String) throws(DaemonClientError) {
        self.path = path
        do {
            fd = try UnixSocket.connect(to: path)
        } catch {
            switch error.errno {
            case ENOENT, ECONNREFUSED, ENOTSOCK: throw .notRunning(path: path, cause: error)
            default: throw .connectionFailed(path: path, cause: error)
            }
        }
    }

    var isInterrupted: Bool { state.withLock { $0.interrupted } }

    func send(_ request: ClientRequest) throws(DaemonClientError) {
        do { try UnixSocket.writeAll(fd, request.line) } catch {
            throw .connectionFailed(path: path, cause: error)
        }
    }

    /// The next complete line, or `nil` at end of stream. When one read brings
    /// several, the newest wins: each is a complete status.
    func nextLine(_ reader: inout LineReader) throws(DaemonClientError) -> [UInt8]? {
        var pendingLines: [[UInt8]] = []
        while pendingLines.isEmpty {
            let count = reader.chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR { continue }
                throw .connectionFailed(path: path, cause: SystemError("read"))
            }
            do { pendingLines = try reader.lines.append(reader.chunk[0..<count]) } catch {
                throw .protocolError(.malformed("a line longer than \(DaemonClient.lineLimit) bytes"))
            }
        }
        return pendingLines.last
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
