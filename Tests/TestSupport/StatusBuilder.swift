import Foundation
import Reachability

/// The one way tests build a status: each family online through a path or
/// without a route, the rest as the daemon's first status has it unless
/// said (no links, number 1, from the daemon, at the epoch). A test sets
/// what else it needs on the copy it gets.
///
/// ```swift
/// let eth0 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1")
/// var status = NetworkStatus.built(ipv4: .through(eth0))
/// status.connectivity = .portal
/// ```
extension NetworkStatus {
    package static func built(
        ipv4: FamilyStatus = .noRoute(), ipv6: FamilyStatus = .noRoute(), connectivity: Connectivity = .unknown,
        portalURL: String? = nil, interfaces: [InterfaceStatus] = [], seq: UInt64 = 1,
        changedAt: Date = Date(timeIntervalSince1970: 0), source: StatusSource = .daemon,
        changes: [StatusChange] = [], watched: [DestinationStatus] = []
    ) -> NetworkStatus {
        var status = NetworkStatus(
            ipv4: ipv4, ipv6: ipv6, connectivity: connectivity, portalURL: portalURL, interfaces: interfaces, seq: seq,
            changedAt: changedAt, source: source)
        status.changes = changes
        status.watched = watched
        return status
    }
}

extension FamilyStatus {
    /// Online through `path`.
    package static func through(_ path: NetworkPath) -> FamilyStatus {
        FamilyStatus(reachability: .online, reason: nil, path: path)
    }

    /// Online through `path` where there is one, else without a route at `level`.
    package static func through(_ path: NetworkPath?, else level: ReachabilityLevel) -> FamilyStatus {
        path.map(through) ?? noRoute(level)
    }

    /// Not online for want of a route: `.offline`, or `.local` where the
    /// link has an address.
    package static func noRoute(_ level: ReachabilityLevel = .offline) -> FamilyStatus {
        FamilyStatus(reachability: level, reason: .noRoute, path: nil)
    }
}
