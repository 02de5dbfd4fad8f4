/// A status as a ``FollowSession`` delivers it: from a daemon, its line as
/// received, decoded only when asked (once), so that `reachd monitor --json`
/// prints the daemon's bytes without decoding them.
package struct StatusUpdate {
    /// The daemon's line without its newline; `nil` when computed in-process.
    package let line: [UInt8]?
    private let decoded: Decoded

    private final class Decoded {
        var result: Result<NetworkStatus, DaemonClientError>?
    }

    init(_ status: NetworkStatus, line: [UInt8]?) {
        self.line = line
        decoded = Decoded()
        decoded.result = .success(status)
    }

    init(line: [UInt8]) {
        self.line = line
        decoded = Decoded()
    }

    /// What decoding the line found, once someone asked for ``status()``;
    /// `nil` before that.
    var decodedResult: Result<NetworkStatus, DaemonClientError>? { decoded.result }

    /// The status; decoding a daemon's line the first time.
    package func status() throws(DaemonClientError) -> NetworkStatus {
        if let result = decoded.result { return try result.get() }
        let result: Result<NetworkStatus, DaemonClientError>
        do throws(DaemonClientError) {
            guard case .status(let status) = try DaemonMessage.received(line ?? []) else {
                throw .protocolError(.malformed("a line that says it is a status is not one"))
            }
            result = .success(status)
        } catch {
            result = .failure(error)
        }
        decoded.result = result
        return try result.get()
    }

    /// A daemon's status as `detail` asked for it: a daemon that predates
    /// summaries answers every request in full, so the summary is made here,
    /// and its line re-encoded (what `--json` prints).
    static func inDetail(
        _ answer: (status: NetworkStatus, line: [UInt8]), _ detail: StatusDetail
    ) -> (status: NetworkStatus, line: [UInt8]) {
        guard detail == .summary, !answer.status.isSummary else { return answer }
        let summary = answer.status.summary()
        return (summary, Array(DaemonMessage.status(summary).line().dropLast()))
    }
}

extension StatusUpdate: Equatable {
    /// The same daemon line or, computed in-process, the same status: what
    /// a reader is handed. Whether the line was decoded yet is a cache's
    /// state, not the update's.
    package static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.line == nil, rhs.line == nil else { return lhs.line == rhs.line }
        return lhs.decodedResult == rhs.decodedResult
    }
}

extension DaemonMessage {
    /// A line a daemon sent, as a client takes it: what does not decode is a
    /// protocol error of that daemon's.
    static func received(_ line: [UInt8]) throws(DaemonClientError) -> DaemonMessage {
        do { return try decode(line) } catch { throw .protocolError(error) }
    }
}
