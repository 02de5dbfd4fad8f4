import Reachability

/// Where `reachd status` gets its one answer: the first daemon that answers,
/// else one in-process netlink snapshot. The daemon is an optimisation, never a
/// precondition. (Following changes is ``ReachabilityMonitor``'s job.)
struct StatusFeed: Sendable {
    /// Daemon sockets to try, in order; empty means in-process only.
    let socketPaths: [String]
    /// Whether to compute the answer in-process when none of them answers;
    /// otherwise that is an error.
    var fallsBackInProcess = true

    /// One status, and a notice for the user when it was computed in-process.
    /// The daemons tried share one `timeout`, so a stopped or refusing daemon
    /// delays the answer by at most that.
    /// `line`: the daemon's line as received, `nil` when computed in-process.
    func currentStatus(timeout: Duration = DaemonClient.defaultTimeout) throws
        -> (status: NetworkStatus, line: [UInt8]?, notice: String?)
    {
        let deadline = ContinuousClock.now + timeout
        var failures: [String] = []
        for path in socketPaths {
            do {
                let (status, line) = try DaemonClient(socketPath: path).ask(.get, timeout: deadline - .now)
                return (status, line, nil)
            } catch {
                failures.append(Self.describe(error, at: path))
            }
        }
        guard fallsBackInProcess else { throw StatusFeedError(failures: failures) }
        // Asked for no daemon, the user needs no notice that none answered.
        let notice = socketPaths.isEmpty ? nil : failures.joined(separator: "; ") + "; computed in-process from netlink"
        return (try EmbeddedMonitor.currentStatus(), nil, notice)
    }

    static func describe(_ error: DaemonClientError, at path: String) -> String {
        switch error {
        case .notRunning: "no daemon at \(path)"
        case .connectionFailed, .closed, .timedOut, .rejected, .protocolError: error.description
        }
    }
}

/// No daemon answered where the user said one would.
struct StatusFeedError: Error, CustomStringConvertible {
    let failures: [String]
    var description: String { failures.joined(separator: "; ") }
}
