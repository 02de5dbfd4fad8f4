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

    /// The connectivity of a status with these families: across the families
    /// online by routes, `full` if either was found so, else a portal, else
    /// `limited`; `none` when neither is online; `unknown` while no finding
    /// for the current paths has come in.
    package func connectivity(ipv4 ipv4Status: FamilyStatus, ipv6 ipv6Status: FamilyStatus)
        -> (Connectivity, portalURL: String?)
    {
        guard ipv4Status.path != nil || ipv6Status.path != nil else { return (.none, nil) }
        let current = current(ipv4: ipv4Status, ipv6: ipv6Status)
        if current.contains(where: { $0.connectivity == .full }) { return (.full, nil) }
        if let portal = current.first(where: { $0.connectivity == .portal }) { return (.portal, portal.portalURL) }
        if current.contains(where: { $0.connectivity == .limited }) { return (.limited, nil) }
        return (.unknown, nil)
    }

    /// Why ``connectivity(ipv4:ipv6:)`` is what it is: the reason of the
    /// finding that decided it (the first `full` one, else the portal,
    /// else the first `limited` one); `nil` without one.
    package func reason(ipv4 ipv4Status: FamilyStatus, ipv6 ipv6Status: FamilyStatus) -> ConnectivityReason? {
        let current = current(ipv4: ipv4Status, ipv6: ipv6Status)
        for verdict in [Connectivity.full, .portal, .limited] {
            if let deciding = current.first(where: { $0.connectivity == verdict }) { return deciding.reason }
        }
        return nil
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
