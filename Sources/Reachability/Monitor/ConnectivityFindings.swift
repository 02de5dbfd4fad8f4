/// What a connectivity check found, per family, each finding tied to the path
/// it was made on: an input to ``NetworkWatcher``, which the daemon's checker
/// feeds back after consuming the paths the watcher published.
///
/// A finding counts only while its family's path is still the one probed, so
/// a path that changes publishes `unknown` at once, in the same status as the
/// change, and never the old path's verdict.
package struct ConnectivityFindings: Sendable, Equatable {
    package struct Finding: Sendable, Equatable {
        package var path: NetworkPath
        package var connectivity: Connectivity
        package var portalURL: String?
        /// The check host's name did not resolve while its server answered:
        /// names fail while the path works (`dns: failing`).
        package var namesFail: Bool
        /// Why the verdict is what it is; `nil` where a test does not say.
        package var reason: ConnectivityReason?

        package init(
            path: NetworkPath, connectivity: Connectivity, portalURL: String? = nil, namesFail: Bool = false,
            reason: ConnectivityReason? = nil
        ) {
            self.path = path
            self.connectivity = connectivity
            self.portalURL = portalURL
            self.namesFail = namesFail
            self.reason = reason
        }
    }

    package var ipv4: Finding?
    package var ipv6: Finding?

    package init(ipv4: Finding? = nil, ipv6: Finding? = nil) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
    }

    /// Forgets the findings for paths the families no longer have: a path that
    /// goes and comes back (a cable re-plugged, a Wi-Fi network with the same
    /// gateway as the last one) is unknown again until probed again.
    package mutating func forget(pathsOtherThan ipv4Status: FamilyStatus, _ ipv6Status: FamilyStatus) {
        if ipv4?.path != ipv4Status.path { ipv4 = nil }
        if ipv6?.path != ipv6Status.path { ipv6 = nil }
    }

    /// The connectivity of a status with these families (docs/PROTOCOL.md,
    /// "Combining the families"). Each family online by routes has a say:
    /// its finding on its current path, or `unknown` when none has come
    /// since that path came (its first probe is running), except a family
    /// not probed at all, whose finding is `none` (the check host has no
    /// address of it: nothing was asked of its path). Across them: `full` if
    /// either is; else a portal; else `unknown` if either is, so that one
    /// family's handover never makes a host `limited` by the other's
    /// verdict; else `limited`. `unknown` when no family has a say; `none`
    /// when neither is online.
    package func connectivity(ipv4 ipv4Status: FamilyStatus, ipv6 ipv6Status: FamilyStatus)
        -> (Connectivity, portalURL: String?)
    {
        let combined = combine(ipv4: ipv4Status, ipv6: ipv6Status)
        return (combined.connectivity, combined.portalURL)
    }

    /// Why ``connectivity(ipv4:ipv6:)`` is what it is: the reason of the
    /// finding that decided it (the first `full` one, else the portal,
    /// else the first `limited` one); `nil` where no finding decided it,
    /// but `noCheckAddress` where no family was probed for that reason.
    package func reason(ipv4 ipv4Status: FamilyStatus, ipv6 ipv6Status: FamilyStatus) -> ConnectivityReason? {
        combine(ipv4: ipv4Status, ipv6: ipv6Status).reason
    }

    /// The one rule both answers come from.
    private func combine(ipv4 ipv4Status: FamilyStatus, ipv6 ipv6Status: FamilyStatus)
        -> (connectivity: Connectivity, portalURL: String?, reason: ConnectivityReason?)
    {
        let online = [(ipv4Status, ipv4), (ipv6Status, ipv6)].filter { $0.0.path != nil }
        guard !online.isEmpty else { return (.none, nil, nil) }
        // Each online family's say: a current finding, or nil (unknown).
        let says = online.map { status, finding in finding?.path == status.path ? finding : nil }
        let heard = says.compactMap { $0 }.filter { $0.connectivity != .none }
        if let full = heard.first(where: { $0.connectivity == .full }) { return (.full, nil, full.reason) }
        if let portal = heard.first(where: { $0.connectivity == .portal }) { return (.portal, portal.portalURL, portal.reason) }
        if says.contains(where: { $0 == nil }) { return (.unknown, nil, nil) }
        if let limited = heard.first(where: { $0.connectivity == .limited }) { return (.limited, nil, limited.reason) }
        // Every online family unprobed, each for its own reason (or an
        // unknown verdict from a checker this version does not have).
        return (.unknown, nil, says.compactMap { $0?.reason }.first)
    }

    /// Whether a finding for a current path says names fail.
    package func namesFail(ipv4 ipv4Status: FamilyStatus, ipv6 ipv6Status: FamilyStatus) -> Bool {
        current(ipv4: ipv4Status, ipv6: ipv6Status).contains { $0.namesFail }
    }

    /// The findings made on the families' paths as they are now.
    private func current(ipv4 ipv4Status: FamilyStatus, ipv6 ipv6Status: FamilyStatus) -> [Finding] {
        [(ipv4Status, ipv4), (ipv6Status, ipv6)].compactMap { status, finding in
            status.path != nil && finding?.path == status.path ? finding : nil
        }
    }
}
