/// Why one daemon did not give a client its answer. A ``ReachabilityError``
/// lists one per daemon tried.
public enum DaemonClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing listens at the path (ENOENT, ECONNREFUSED): start the daemon,
    /// or let ``ReachabilityMonitor`` compute the answer in-process.
    case notRunning(path: String, cause: SystemError)
    /// Connecting, writing or reading failed otherwise (EACCES, say).
    case connectionFailed(path: String, cause: SystemError)
    /// The daemon closed the connection before answering (it is stopping, say).
    case closed(path: String)
    /// The daemon did not accept the connection or answer within `timeout`: it
    /// is stopped (SIGSTOP, a debugger), or its listen queue is full.
    case timedOut(path: String, timeout: Duration)
    /// The daemon answered with an error message.
    case rejected(code: String, message: String)
    /// The daemon serves another network namespace: its socket path reached
    /// this process through a shared filesystem (`ip netns exec`,
    /// `PrivateNetwork=yes`), and its answers are about another network.
    case otherNetwork(path: String)
    /// The daemon's status names no network namespace (a daemon before
    /// 0.7, or one that is not reachd): nothing says it serves this one.
    case unnamedNetwork(path: String)
    /// The daemon at a default path runs as `owner`, neither this user nor
    /// root: not asked, for anyone able to put a socket there could answer
    /// for the network.
    case untrustedOwner(path: String, owner: UInt32)
    case protocolError(ProtocolError)

    public var description: String {
        switch self {
        case .notRunning(let path, let cause):
            "no reachd daemon at \(path) (\(cause.description)); start one with `reachd daemon`"
        case .connectionFailed(let path, let cause):
            "cannot talk to the reachd daemon at \(path): \(cause.description)"
        case .closed(let path):
            "the reachd daemon at \(path) closed the connection"
        case .timedOut(let path, let timeout):
            "the reachd daemon at \(path) did not answer within \(Self.describe(timeout)) (stopped or overloaded)"
        case .rejected(let code, let message):
            // The daemon's words, and any program may sit on a socket.
            "the reachd daemon refused the request (\(code.escapingControlCharacters)): \(message.escapingControlCharacters)"
        case .protocolError(let error):
            error.description
        case .otherNetwork(let path):
            "the reachd daemon at \(path) serves another network namespace"
        case .unnamedNetwork(let path):
            "the reachd daemon at \(path) does not say which network namespace it serves (daemons since 0.7 do), "
                + "so its answers are not taken; upgrade it"
        case .untrustedOwner(let path, let owner):
            "the daemon on \(path) runs as user \(owner == .max ? "unknown" : "\(owner)"), neither you nor root, "
                + "so reachd does not trust it; remove the socket, or name a daemon you trust with --socket or REACHD_SOCKET"
        }
    }

    /// "1 s", "250 ms": how a person reads a timeout.
    private static func describe(_ duration: Duration) -> String {
        let milliseconds = Int((duration / .milliseconds(1)).rounded())
        return milliseconds >= 1000 && milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}
