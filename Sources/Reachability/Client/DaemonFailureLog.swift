import Logging

/// What a ``FollowSession`` logs of daemon failures: each once until the
/// daemon answers again, so that a refusing daemon costs one warning, not
/// one per retry. Pure: failures in, the line to log out. The `reachd`
/// command holds one too, to say on its terminal what a session would log.
package struct DaemonFailureLog: Equatable {
    /// The last failure warned about since the daemon last answered.
    private var lastWarned: String?

    package init() {}

    /// The daemon answered: its next failure is news.
    package mutating func daemonAnswered() {
        lastWarned = nil
    }

    /// The line to log for `error`, met by a session following `source`;
    /// `nil`: nothing.
    package mutating func entry(for error: DaemonClientError, source: SourcePreference)
        -> (level: Logger.Level, message: String, metadata: Logger.Metadata)?
    {
        let description = "\(error)"
        let isNews = lastWarned != description
        lastWarned = description
        switch error {
        case .protocolError(.versionMismatch), .otherNetwork, .unnamedNetwork:
            // No retry will answer differently (another network's daemon is
            // not asked again; another version answers the same): in-process
            // is not a stopgap here.
            let instead = source == .automatic ? "; following the network in-process instead" : ""
            return isNews ? (.warning, "\(error.description)\(instead)", [:]) : nil
        case .notRunning, .closed:
            return (.debug, "daemon unavailable", ["error": "\(error)"])
        case .timedOut, .connectionFailed, .rejected, .protocolError, .untrustedOwner:
            let meanwhile = source == .automatic ? "; following the network in-process meanwhile" : ""
            return isNews ? (.warning, "\(error.description)\(meanwhile)", [:]) : (.debug, "daemon still unavailable", ["error": "\(error)"])
        }
    }
}
