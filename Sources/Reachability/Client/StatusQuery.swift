/// One answer: from the first daemon that answers, else (where the source
/// allows) computed in-process from one netlink snapshot. The synchronous
/// core of ``ReachabilityMonitor/currentStatus(source:socketPath:detail:timeout:)``
/// and of `reachd status` and `reachd check`; following changes is
/// ``StatusFollower``'s job.
package struct StatusQuery: Sendable {
    /// Where the answer may come from: daemons, in-process, or either.
    package var source: ReachabilityMonitor.Source
    /// Daemon sockets to try, in order.
    package var socketPaths: [String]
    package var detail: StatusDetail = .full

    package init(source: ReachabilityMonitor.Source, socketPaths: [String], detail: StatusDetail = .full) {
        self.source = source
        self.socketPaths = socketPaths
        self.detail = detail
    }

    /// Asks the daemons in turn, sharing one `timeout` between them (a
    /// stopped daemon costs at most that), then computes in-process where the
    /// source allows. `.check` waits for the daemon's connectivity check and
    /// is never answered in-process. Throws ``StatusQueryError`` when no
    /// allowed source answers.
    package func answer(
        _ operation: ClientRequest.Operation = .get, timeout: Duration = DaemonClient.defaultTimeout
    ) throws(StatusQueryError) -> StatusAnswer {
        let deadline = ContinuousClock.now + timeout
        var failures: [DaemonClientError] = []
        if source != .embedded {
            for path in socketPaths {
                do throws(DaemonClientError) {
                    let (status, line) = try DaemonClient(socketPath: path)
                        .ask(ClientRequest(operation, detail: detail), timeout: max(deadline - .now, .milliseconds(1)))
                    return StatusAnswer(status: status, line: line, daemonFailures: failures)
                } catch {
                    failures.append(error)
                }
            }
        }
        guard source != .daemon, operation != .check else { throw .noDaemonAnswered(failures) }
        do throws(NetlinkError) {
            let status = try EmbeddedMonitor.currentStatus().detailed(detail)
            return StatusAnswer(status: status, line: nil, daemonFailures: failures)
        } catch {
            throw .inProcessFailed(error, daemonFailures: failures)
        }
    }
}

/// A status and where it came from.
package struct StatusAnswer: Sendable {
    package var status: NetworkStatus
    /// The daemon's line as received (what `status --json` prints, so that
    /// keys a newer daemon adds survive); `nil` when computed in-process.
    package var line: [UInt8]?
    /// Why each daemon tried before the answer did not give it.
    package var daemonFailures: [DaemonClientError]
}

/// No source that a status could come from answered: what
/// ``ReachabilityMonitor/currentStatus(source:socketPath:detail:timeout:)`` throws.
public enum StatusQueryError: Error, Sendable, CustomStringConvertible {
    /// Every daemon failed, and the answer may not be computed in-process.
    case noDaemonAnswered([DaemonClientError])
    /// Netlink failed in-process, after the daemons (if any) did.
    case inProcessFailed(NetlinkError, daemonFailures: [DaemonClientError])

    public var description: String {
        switch self {
        case .noDaemonAnswered(let failures) where failures.isEmpty:
            "no reachd daemon to ask"
        case .noDaemonAnswered(let failures):
            failures.map(\.briefDescription).joined(separator: "; ")
        case .inProcessFailed(let error, let failures):
            (failures.map(\.briefDescription) + ["computing in-process failed: \(error)"]).joined(separator: "; ")
        }
    }
}

extension DaemonClientError {
    /// As a list of daemons tried reads best: "no daemon at PATH" rather than
    /// the advice to start one, which the caller gives once.
    package var briefDescription: String {
        switch self {
        case .notRunning(let path, _): "no daemon at \(path)"
        case .connectionFailed, .closed, .timedOut, .rejected, .protocolError: description
        }
    }
}
