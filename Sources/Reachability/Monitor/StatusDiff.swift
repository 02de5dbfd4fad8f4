/// Works out a new status's ``NetworkStatus/changes``: the one place where
/// two statuses are compared. Every surface (the log, the journal, the
/// metrics, `reachd monitor`, the GIO module) renders what this found.
enum StatusDiff {
    /// What differs from `old` to `new`, in a fixed order: each family's
    /// reachability and path, then the verdict, name resolution, the portal, metering, the
    /// links, and the watched targets in their configured order. Empty
    /// exactly when the two describe the same network, but for a watched
    /// target gone from the list, which the daemon's fixed list never has.
    static func changes(from old: NetworkStatus, to new: NetworkStatus) -> [StatusChange] {
        var changes: [StatusChange] = []
        // Asked of two statuses that differ: a change or more, a route's
        // going three (a family's reachability and path, name resolution).
        // Grown from empty, the list was made anew at each of them.
        changes.reserveCapacity(4)
        for family in AddressFamily.allCases {
            let (before, after) = (old.family(family), new.family(family))
            if before.reachability != after.reachability || before.reason != after.reason {
                changes.append(.reachability(family, from: before.reachability, to: after.reachability))
            }
            if before.path != after.path { changes.append(.path(family, from: before.path, to: after.path)) }
        }
        // As a family's reason: a new why is a connectivity change.
        if old.connectivity != new.connectivity || old.connectivityReason != new.connectivityReason {
            changes.append(.connectivity(from: old.connectivity, to: new.connectivity))
        }
        if old.dns != new.dns { changes.append(.dns(from: old.dns.state, to: new.dns.state)) }
        if old.portalURL != new.portalURL { changes.append(.portalURL) }
        if old.metered != new.metered { changes.append(.metered(from: old.metered, to: new.metered)) }
        let links = changedLinks(from: old.interfaces, to: new.interfaces)
        if !links.isEmpty { changes.append(.interfaces(naming: links)) }
        let watchedBefore = Dictionary(old.watched.map { ($0.target, $0) }, uniquingKeysWith: { first, _ in first })
        for target in new.watched where watchedBefore[target.target] != target {
            changes.append(.watched(target: target.target, from: watchedBefore[target.target]?.state, to: target.state))
        }
        return changes
    }

    /// The names of the links that came, went or changed, new ones by their
    /// new name, in index order.
    private static func changedLinks(from old: [InterfaceStatus], to new: [InterfaceStatus]) -> [String] {
        guard old != new else { return [] }
        let before = Dictionary(old.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(new.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        return Set(before.keys).union(after.keys).sorted().compactMap { index in
            guard before[index] != after[index] else { return nil }
            return (after[index] ?? before[index])?.name
        }
    }
}
