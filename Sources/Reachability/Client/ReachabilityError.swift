/// Why a status or a destination's answer could not be had: what every call
/// of ``ReachabilityMonitor`` that asks or follows throws, and what
/// ``ReachabilityMonitor/lastError`` holds.
///
/// ```swift
/// do {
///     _ = try await ReachabilityMonitor.currentStatus(source: .daemon)
/// } catch {
///     print(error)   // "no daemon at /run/reachd/reachd.sock": each daemon tried, and why
/// }
/// ```
public enum ReachabilityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every daemon tried failed (in order), and the answer may not be
    /// computed in-process: the source is `.daemon`, the daemon refused the
    /// request, or it runs the connectivity check that was asked for.
    case noDaemonAnswered([DaemonClientError])
    /// Netlink failed in-process, after the daemons (if any) did.
    case inProcessFailed(NetlinkError, daemonFailures: [DaemonClientError])
    /// Waiting for the daemon and netlink failed (`poll`, a pipe): the
    /// process is out of descriptors, say.
    case waitFailed(SystemError)

    public var description: String {
        switch self {
        case .noDaemonAnswered(let failures) where failures.isEmpty:
            "no reachd daemon to ask"
        case .noDaemonAnswered(let failures):
            failures.map(\.briefDescription).joined(separator: "; ")
        case .inProcessFailed(let error, let failures):
            (failures.map(\.briefDescription) + ["computing in-process failed: \(error)"]).joined(separator: "; ")
        case .waitFailed(let error):
            "waiting for the network failed: \(error)"
        }
    }

    /// The daemons' failures, in the order they were tried.
    package var daemonFailures: [DaemonClientError] {
        switch self {
        case .noDaemonAnswered(let failures), .inProcessFailed(_, let failures): failures
        case .waitFailed: []
        }
    }
}

extension DaemonClientError {
    /// As a list of daemons tried reads best: "no daemon at PATH" rather than
    /// the advice to start one, which the caller gives once.
    package var briefDescription: String {
        switch self {
        case .notRunning(let path, _): "no daemon at \(path)"
        case .connectionFailed, .closed, .timedOut, .rejected, .protocolError, .otherNetwork, .unnamedNetwork, .untrustedOwner:
            description
        }
    }
}
