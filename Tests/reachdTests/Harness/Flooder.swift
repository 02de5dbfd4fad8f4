import Synchronization
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// One connection that pipelines `{"op":"get"}` as fast as the daemon takes
/// it, on a thread of its own (never one of the concurrency runtime's), until
/// stopped or the daemon closes it. `reading`: it also reads every answer as
/// fast as it can; otherwise it never reads one.
final class Flooder: Sendable {
    /// Shared with the thread, which must not keep the flooder itself alive.
    private final class State: Sendable {
        let value = Mutex((stop: false, closed: false, sent: 0))
        func withLock<R: Sendable>(_ body: (inout (stop: Bool, closed: Bool, sent: Int)) -> R) -> R {
            value.withLock { body(&$0) }
        }
    }

    private let state = State()

    init(path: String, reading: Bool) throws {
        let fd = try UnixSocket.connect(to: path)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let requests = Array(String(repeating: #"{"op":"get"}"# + "\n", count: 64).utf8)
        startDetachedThread { [state] in
            defer { close(fd) }
            var sink = [UInt8](repeating: 0, count: 1 << 16)
            while !state.withLock({ $0.stop }) {
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT | (reading ? POLLIN : 0)), revents: 0)
                _ = poll(&descriptor, 1, 20)
                let sent = requests.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0, errno != EAGAIN {
                    state.withLock { $0.closed = true }
                    return
                }
                if sent > 0 { state.withLock { $0.sent += sent } }
                if reading {
                    while sink.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0 {}
                }
            }
        }
    }

    /// The daemon closed the connection.
    var wasClosed: Bool { state.withLock { $0.closed } }
    /// Bytes of requests the daemon's side has taken.
    var bytesSent: Int { state.withLock { $0.sent } }

    func stop() {
        state.withLock { $0.stop = true }
    }

    deinit { stop() }
}
