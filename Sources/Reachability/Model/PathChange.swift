/// A family's path moved: what ``ReachabilityMonitor/pathChanges()``
/// yields, one ``StatusChange/path(_:from:to:)`` of a published status.
///
/// ```swift
/// for try await change in monitor.pathChanges() where change.isHandover {
///     print("now via \(change.to?.interface ?? "?"): reconnecting")
/// }
/// ```
public struct PathChange: Sendable, Equatable {
    /// The family whose path moved.
    public var family: AddressFamily
    /// The path before, or `nil` where the family had none (it was offline).
    public var from: NetworkPath?
    /// The path now, or `nil` where the family has none (it went offline).
    public var to: NetworkPath?
    /// The status that moved it.
    public var status: NetworkStatus

    /// A change as a published status says it.
    public init(family: AddressFamily, from: NetworkPath?, to: NetworkPath?, status: NetworkStatus) {
        self.family = family
        self.from = from
        self.to = to
        self.status = status
    }

    /// Online before and after, on another path (another link, gateway or
    /// source address): open connections may be dead although the family
    /// never went offline.
    public var isHandover: Bool { from != nil && to != nil }
}

extension NetworkStatus {
    /// Its ``changes`` that moved a family's path, in order: what a program
    /// holding connections open reconnects on.
    ///
    /// ```swift
    /// for try await status in monitor.statuses() where !status.pathChanges.isEmpty {
    ///     print("the way out moved; reconnecting")
    /// }
    /// ```
    public var pathChanges: [PathChange] {
        changes.compactMap { change in
            switch change {
            case .path(let family, let from, let to): PathChange(family: family, from: from, to: to, status: self)
            case .reachability, .connectivity, .dns, .metered, .portalURL, .interfaces, .watched, .unrecognized: nil
            }
        }
    }
}
