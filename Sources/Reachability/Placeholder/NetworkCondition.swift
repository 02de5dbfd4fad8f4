/// The network as the placeholder engine sees it.
public enum NetworkCondition: Sendable, Hashable, CaseIterable {
    /// No status yet. Counts as online, so that nothing says "no network"
    /// before anything is known.
    case unknown
    case online
    case offline
    /// Behind a captive portal: the user must sign in.
    case portal

    /// Reads a reachd status: a portal if the connectivity check says so,
    /// else online or offline.
    ///
    /// ```swift
    /// for try await status in monitor.statuses() {
    ///     engine.networkChanged(NetworkCondition(status), at: .now)
    /// }
    /// ```
    public init(_ status: NetworkStatus) {
        switch status.connectivity {
        case .portal: self = .portal
        case .unknown, .none, .limited, .full: self = status.online ? .online : .offline
        }
    }

    /// Online, or not known to be otherwise.
    public var isUsable: Bool {
        switch self {
        case .unknown, .online: true
        case .offline, .portal: false
        }
    }
}
