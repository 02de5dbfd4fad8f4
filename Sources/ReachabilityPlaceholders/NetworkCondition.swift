import Reachability

/// The network as the placeholder engine sees it.
public enum NetworkCondition: Sendable, Hashable, CaseIterable {
    /// No status yet. Counts as online, so that nothing says "no network"
    /// before anything is known.
    case unknown
    case online
    case offline
    /// Behind a captive portal: the user must sign in.
    case portal
    /// Connected, but the Internet does not answer: the connectivity check got
    /// no answer (a dead uplink, a broken DNS).
    case limited

    /// Reads a reachd status: a portal or limited access if the connectivity
    /// check says so, else online or offline as the routes say. A verdict from
    /// a newer daemon that this version does not know is as online as the
    /// daemon said (`NetworkStatus.online`); without its word, it is not
    /// `full`, and online routes with it are `limited`.
    ///
    /// ```swift
    /// for try await status in monitor.statuses() {
    ///     _ = engine.networkChanged(NetworkCondition(status), portalURL: status.portalURL, at: .now)
    /// }
    /// ```
    public init(_ status: NetworkStatus) {
        switch status.connectivity {
        case .portal: self = .portal
        case .limited: self = .limited
        case .unknown, .none, .full: self = status.reachability == .online ? .online : .offline
        case .unrecognized: self = status.online ? .online : status.reachability == .online ? .limited : .offline
        }
    }

    /// Reads the app's own destination: online when its packets would go
    /// somewhere, whether or not the host has a default route; offline when
    /// the destination is unreachable or unresolved; unknown while its name
    /// first resolves. When the destination leaves through the host's own
    /// path out, the host's connectivity check still speaks (a portal, a dead
    /// uplink); through another interface (a VPN, an intranet link) it does
    /// not: the check probed somewhere else.
    ///
    /// ```swift
    /// let api = try Destination(parsing: "wiki.corp.example")
    /// let answer = try await ReachabilityMonitor.reachability(of: api)
    /// _ = engine.networkChanged(NetworkCondition(answer, host: status), portalURL: status.portalURL, at: .now)
    /// ```
    public init(_ destination: DestinationStatus, host: NetworkStatus?) {
        switch destination.state {
        case .pending, .unknown:
            self = .unknown
        case .unreachable, .unresolved, .unrecognized:
            self = .offline
        case .reachable:
            guard let via = destination.via, let host else {
                self = .online
                return
            }
            guard host.family(via.family).path?.index == via.index else {
                self = .online
                return
            }
            switch NetworkCondition(host) {
            case .portal: self = .portal
            case .limited: self = .limited
            case .unknown, .online, .offline: self = .online
            }
        }
    }

    /// Online, or not known to be otherwise.
    public var isUsable: Bool {
        switch self {
        case .unknown, .online: true
        case .offline, .portal, .limited: false
        }
    }
}
