import Foundation
import Testing
@testable import Reachability
@testable import ReachabilityPlaceholders
import TestSupport

/// The placeholder's network condition from the app's own destination.
@Suite("Network condition of a destination")
struct DestinationConditionTests {
    static func host(connectivity: Connectivity, online: Bool = true) -> NetworkStatus {
        var status = NetworkStatus.built(
            ipv4: .through(online ? NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1") : nil, else: .local),
            ipv6: .noRoute(.local))
        status.connectivity = connectivity
        return status
    }

    static func answer(_ state: DestinationState, via index: Int? = nil) -> DestinationStatus {
        let route = index.map {
            DestinationRoute(interface: $0 == 2 ? "eth0" : "wg0", index: $0, family: .ipv4, gateway: nil, table: 254, source: "10.8.0.2")
        }
        return DestinationStatus(
            target: "10.8.0.10:443", host: "10.8.0.10", port: 443, state: state,
            reason: state == .reachable || state == .pending ? nil : .route(.noRoute), via: route, addresses: [], seq: 1,
            source: .daemon)
    }

    @Test func aServerBehindAVPNIsOnlineOnAnOfflineHost() {
        #expect(NetworkCondition(Self.answer(.reachable, via: 3), host: Self.host(connectivity: .unknown, online: false)) == .online)
        #expect(NetworkCondition(Self.host(connectivity: .unknown, online: false)) == .offline, "the host alone says offline")
    }

    @Test func theHostsPortalCountsOnlyOnItsOwnPath() {
        let portal = Self.host(connectivity: .portal)
        #expect(NetworkCondition(Self.answer(.reachable, via: 2), host: portal) == .portal)
        #expect(NetworkCondition(Self.answer(.reachable, via: 3), host: portal) == .online, "the VPN's server is not behind it")
        #expect(NetworkCondition(Self.answer(.reachable, via: 2), host: Self.host(connectivity: .limited)) == .limited)
        #expect(NetworkCondition(Self.answer(.reachable, via: 2), host: Self.host(connectivity: .full)) == .online)
        #expect(NetworkCondition(Self.answer(.reachable, via: 2), host: nil) == .online)
    }

    @Test func anUnreachableOrUnresolvedServerIsOfflineOnAnOnlineHost() {
        let online = Self.host(connectivity: .full)
        #expect(NetworkCondition(Self.answer(.unreachable), host: online) == .offline)
        #expect(NetworkCondition(Self.answer(.unresolved), host: online) == .offline)
        #expect(NetworkCondition(Self.answer(.unrecognized("flapping")), host: online) == .offline)
        #expect(NetworkCondition(Self.answer(.pending), host: online) == .unknown, "no verdict yet: nothing says no network")
    }
}
