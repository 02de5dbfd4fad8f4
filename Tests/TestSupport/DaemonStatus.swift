import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The status the daemon at `path` gives one `get`, within a second: what a
/// test asks to see that a daemon runs and what it says. Straight through
/// the socket, not the client library: the daemon may serve a test's
/// network namespace, which the library rightly takes for no daemon of
/// this process's.
package func daemonStatus(at path: String) throws -> NetworkStatus {
    let fd = try UnixSocket.connect(to: path, timeout: .seconds(1))
    defer { close(fd) }
    try UnixSocket.writeAll(fd, Array(#"{"op":"get"}"#.utf8) + [10])
    UnixSocket.setTimeout(fd, SO_RCVTIMEO, .seconds(1))
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while !received.contains(10) {
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { throw SystemError("read the daemon's answer") }
        received += chunk[0..<count]
    }
    guard case .status(let status) = try DaemonMessage.decode(received.prefix { $0 != 10 }) else {
        throw SystemError("the daemon answered with no status", errno: EPROTO)
    }
    return status
}

/// Waits until a daemon answers a `get` at `path`, and returns its status.
/// 30 s: make test starts every suite at once, and a daemon's start has
/// taken over 10 s in that first storm; a test that needs a bound on the
/// start measures it itself.
package func daemonAnswers(at path: String) async throws -> NetworkStatus {
    try await eventually("the daemon at \(path) answers", timeout: .seconds(30)) { try? daemonStatus(at: path) }
}

/// One `get` of the daemon at `path`, timed from the connect to its answer.
package func timedDaemonStatus(at path: String) throws -> (status: NetworkStatus, took: Duration) {
    let asked = ContinuousClock.now
    let status = try daemonStatus(at: path)
    return (status, ContinuousClock.now - asked)
}
