/// Why a client could not get a status from the daemon.
public enum DaemonClientError: Error, Sendable, CustomStringConvertible {
    /// Nothing listens at the path (ENOENT, ECONNREFUSED): start the daemon or
    /// compute in-process with ``EmbeddedMonitor``.
    case notRunning(path: String, cause: SystemError)
    /// Connecting, writing or reading failed otherwise (EACCES, say).
    case connectionFailed(path: String, cause: SystemError)
    /// The daemon closed the connection before answering (it is stopping, say).
    case closed(path: String)
    /// The daemon answered with an error message.
    case rejected(code: String, message: String)
    case protocolError(ProtocolError)

    public var description: String {
        switch self {
        case .notRunning(let path, let cause):
            "no reachd daemon at \(path) (\(cause.description)); start one with `reachd daemon`"
        case .connectionFailed(let path, let cause):
            "cannot talk to the reachd daemon at \(path): \(cause.description)"
        case .closed(let path):
            "the reachd daemon at \(path) closed the connection"
        case .rejected(let code, let message):
            "the reachd daemon refused the request (\(code)): \(message)"
        case .protocolError(let error):
            error.description
        }
    }
}
