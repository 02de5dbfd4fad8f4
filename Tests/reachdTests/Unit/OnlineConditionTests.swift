import Foundation
import Testing
@testable import Reachability
@testable import reachd
import TestSupport

/// `wait-online`'s options, judged on statuses: systemd-networkd-wait-online's
/// `--interface NAME[:STATE]`, `--any` and `--ignore`, in reachd's terms.
@Suite("What wait-online waits for")
struct OnlineConditionTests {
    /// IPv4 out through `ipv4Via`, IPv6 through `ipv6Via`; eth0 and wlan0 have carrier, eth1 not.
    static func status(ipv4Via: String? = nil, ipv6Via: String? = nil) -> NetworkStatus {
        func family(_ family: AddressFamily, _ via: String?) -> FamilyStatus {
            guard let via else { return FamilyStatus(reachability: .local, reason: .noRoute, path: nil) }
            return FamilyStatus(
                reachability: .online, reason: nil,
                path: NetworkPath(interface: via, index: 9, family: family, gateway: family == .ipv4 ? "192.0.2.1" : "fe80::1"))
        }
        let links = [("eth0", true), ("eth1", false), ("wlan0", true), ("tun0", true)].enumerated().map { index, link in
            InterfaceStatus(name: link.0, index: index + 2, up: true, carrier: link.1, operstate: link.1 ? "up" : "down",
                            loopback: false, addresses: [])
        }
        return .built(ipv4: family(.ipv4, ipv4Via), ipv6: family(.ipv6, ipv6Via), interfaces: links)
    }

    static func condition(_ arguments: [String]) throws -> OnlineCondition {
        try WaitOnlineCommand.parse(arguments).condition
    }

    @Test func withoutInterfacesAnyFamilyOnlineWillDo() throws {
        let condition = try Self.condition([])
        #expect(condition.met(by: Self.status()) == nil)
        #expect(condition.met(by: Self.status(ipv4Via: "eth0")) == ["online: IPv4 via eth0, gateway 192.0.2.1"])
        #expect(try Self.condition(["-6"]).met(by: Self.status(ipv4Via: "eth0")) == nil)
    }

    /// `--connectivity` waits for the daemon's check to find full access:
    /// not behind a portal, and not while its first probe of a path runs
    /// (`unknown`, which is online). Without a check, routes decide.
    @Test func connectivityWaitsForTheChecksVerdict() throws {
        let condition = try Self.condition(["--connectivity"])
        var status = Self.status(ipv4Via: "eth0")
        #expect(condition.met(by: status) == [
            "online: IPv4 via eth0, gateway 192.0.2.1",
            "connectivity: not checked (no connectivity check runs here); routes alone decided",
        ], "no check: the routes, and it says so")
        status.check = DaemonCheck(url: "http://192.0.2.80/", answerWithin: .seconds(10))
        #expect(condition.met(by: status) == nil, "the first probe still running")
        status.connectivity = .portal
        #expect(condition.met(by: status) == nil)
        status.connectivity = .full
        #expect(condition.met(by: status) == ["online: IPv4 via eth0, gateway 192.0.2.1"])
        #expect(try Self.condition([]).met(by: { var portal = status; portal.connectivity = .portal; return portal }()) != nil,
                "without --connectivity: routes, as networkd's")
    }

    /// `--dns` waits for a name server with a route too (networkd's flag,
    /// judged by routes): online with no routable server is not enough.
    @Test func dnsWaitsForARoutableNameServer() throws {
        let condition = try Self.condition(["--dns"])
        var status = Self.status(ipv4Via: "eth0")
        status.dns = DNSStatus(state: .unroutable, servers: [
            DNSServer(address: "10.8.0.53", state: .unreachable, reason: .noRoute, interface: nil),
        ])
        #expect(condition.met(by: status) == nil)
        status.dns = DNSStatus(state: .ok, servers: [DNSServer(address: "10.8.0.53", state: .reachable, reason: nil, interface: "tun0")])
        #expect(condition.met(by: status) == ["online: IPv4 via eth0, gateway 192.0.2.1", "dns: ok (10.8.0.53 via tun0)"])
        #expect(try Self.condition([]).met(by: { var none = status; none.dns = .unknown; return none }()) != nil, "without --dns: routes")
        #expect(condition.description == "the network, and names to resolve (a name server with a route, and names not failing)")
        #expect(throws: (any Error).self) { try WaitOnlineCommand.parse(["--dns", "--host", "example.com"]).validate() }
    }

    @Test func anIgnoredInterfaceDoesNotCount() throws {
        let condition = try Self.condition(["--ignore", "tun0"])
        #expect(condition.met(by: Self.status(ipv4Via: "tun0")) == nil, "the VPN's route out is not the network")
        #expect(condition.met(by: Self.status(ipv4Via: "tun0", ipv6Via: "eth0")) == ["online: IPv6 via eth0, gateway fe80::1"])
        #expect(condition.description == "the network through an interface other than tun0")
    }

    @Test func everyListedInterfaceMustBeReadyUnlessAny() throws {
        let all = try Self.condition(["-i", "eth0", "-i", "wlan0:carrier"])
        #expect(all.met(by: Self.status(ipv4Via: "wlan0")) == nil, "eth0 carries no route out")
        #expect(all.met(by: Self.status(ipv4Via: "eth0")) == ["online: IPv4 via eth0, gateway 192.0.2.1", "wlan0: carrier"])
        #expect(all.description == "all of: the network through eth0, carrier on wlan0")

        let any = try Self.condition(["-i", "eth0", "-i", "wlan0", "--any"])
        #expect(any.met(by: Self.status()) == nil)
        #expect(any.met(by: Self.status(ipv6Via: "wlan0")) == ["online: IPv6 via wlan0, gateway fe80::1"])
        #expect(any.description == "any of: the network through eth0, the network through wlan0")
    }

    @Test func carrierNeedsTheLinkUpWithCarrier() throws {
        #expect(try Self.condition(["-i", "eth0:carrier"]).met(by: Self.status()) == ["eth0: carrier"])
        #expect(try Self.condition(["-i", "eth1:carrier"]).met(by: Self.status()) == nil)
        #expect(try Self.condition(["-i", "eth9:carrier"]).met(by: Self.status()) == nil, "a missing link has no carrier")
    }

    @Test func routableHonoursTheFamily() throws {
        let condition = try Self.condition(["-4", "-i", "eth0"])
        #expect(condition.met(by: Self.status(ipv6Via: "eth0")) == nil)
        #expect(condition.met(by: Self.status(ipv4Via: "eth0")) != nil)
        #expect(condition.description == "IPv4 through eth0")
    }

    @Test(arguments: [
        (["-i", "eth0:bogus"], "unknown state \"bogus\"; use carrier or routable"),
        (["-i", ":carrier"], "--interface needs a name"),
        (["-i", "eth0", "--ignore", "eth0"], "eth0 is both waited for (--interface) and ignored (--ignore)"),
    ])
    func mistakesAreNamed(_ arguments: [String], _ message: String) {
        #expect {
            try WaitOnlineCommand.parse(arguments)
        } throws: { error in
            WaitOnlineCommand.message(for: error).contains(message)
        }
    }
}
