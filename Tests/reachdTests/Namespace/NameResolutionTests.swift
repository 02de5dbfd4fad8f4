import Foundation
import Testing
import TestSupport
@testable import Reachability

/// The status's `dns` block (issue 36), judged with what the kernel already
/// knows: each configured name server's route, with no packet sent. The
/// daemon reads a resolv.conf of the test's own (``TestNetwork/inHost(etc:)``).
@Suite("Name resolution in the status", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct NameResolutionTests {
    /// Counts what reaches the gateway on port 53, from the host: the
    /// verdict must cost no packet.
    static func countQueries(_ network: TestNetwork) async throws {
        try await TestNetwork.sh(
            "ip netns exec \(network.gateway) nft 'add table inet reachd_dns; "
                + "add chain inet reachd_dns seen { type filter hook prerouting priority -300; }; "
                + "add rule inet reachd_dns seen meta l4proto { udp, tcp } th dport 53 counter'")
    }

    static func queriesSeen(_ network: TestNetwork) async throws -> Int {
        let listing = try await Subprocess.run(
            ["/usr/bin/env", "ip", "netns", "exec", network.gateway, "nft", "list", "chain", "inet", "reachd_dns", "seen"])
        guard let packets = listing.output.firstMatch(of: /counter packets (\d+)/)?.1, let count = Int(packets) else {
            throw HarnessError.commandFailed("no counter in: \(listing.output) \(listing.error)")
        }
        return count
    }

    @Test(.timeLimit(.minutes(1)))
    func aRouteGoingUnderTheResolverMakesItUnroutableWithinASecondAndSendsNothing() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: NameServer.address)
        try await Self.countQueries(network)
        let daemon = try await network.startDaemon(etc: etc)
        defer { daemon.signal(SIGTERM) }

        let working = try await network.waitForStatus("a routable name server") { $0.dns.state == .ok }
        #expect(working.dns.servers == [DNSServer(address: NameServer.address, state: .reachable, reason: nil, interface: "vh")])

        let monitor = try network.startReachd("monitor", "--json", "--socket=\(network.socketPath)")
        _ = try await eventually("the monitor's first status") { monitor.outputLines.first }
        try await network.inHost("route del default")
        let gone = try await network.waitForStatus(timeout: .seconds(1), "no route to the name server") { $0.dns.state == .unroutable }
        #expect(gone.dns.servers.first?.reason == .noRoute)
        let told = try await eventually("the change, to a subscriber") { () -> [StatusChange]? in
            monitor.outputLines.compactMap { line -> [StatusChange]? in
                guard case .status(let status)? = try? DaemonMessage.decode(Array(line.utf8)) else { return nil }
                return status.changes.contains(.dns(from: .ok, to: .unroutable)) ? status.changes : nil
            }.first
        }
        #expect(told.contains(.reachability(.ipv4, from: .online, to: .local)), "with the route that went: \(told)")
        let words = try await network.reachd("status", "--socket=\(network.socketPath)")
        #expect(words.output.contains("DNS: unroutable (10.53.0.53 unreachable (no route))"), "\(words.output)")

        try await network.inHost("route add default via 10.77.0.1")
        try await network.waitForStatus(timeout: .seconds(1), "the name server routable again") { $0.dns.state == .ok }
        #expect(try await Self.queriesSeen(network) == 0, "judged without a packet")
    }

    /// `wait-online --dns` returns once the resolver has a route, not when
    /// the host is online by another way.
    @Test(.timeLimit(.minutes(1)))
    func waitOnlineDNSWaitsForTheRouteToTheResolver() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1")
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: NameServer.address)
        let daemon = try await network.startDaemon(etc: etc)
        defer { daemon.signal(SIGTERM) }
        let waiting = try network.startReachd("wait-online", "--dns", "-t", "20", "--socket=\(network.socketPath)")
        try await network.inHost("route add 10.0.0.0/8 via 10.77.0.1 metric 50")
        #expect(try await holdsThroughout(.milliseconds(300)) { waiting.isRunning },
                "a route to the resolver, but no route out: still waiting")
        try await network.inHost("route add default via 10.77.0.1")
        let status = try await waiting.wait(timeout: .seconds(10))
        #expect(status == 0, "\(waiting.errorOutput)")
        #expect(waiting.outputLines.last == "dns: ok (10.53.0.53 via vh)", "\(waiting.outputLines)")
    }

    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func noConfiguredServerIsNone(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: NameServer.address)
        try "# no name server\n".write(to: etc.appendingPathComponent("resolv.conf"), atomically: false, encoding: .utf8)
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon(etc: etc) }
        defer { daemon?.signal(SIGTERM) }
        let status = try await Subprocess.run(
            network.inHost(etc: etc)
                + [Reachd.binary, "status", "--json", throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon"])
        guard case .status(let decoded) = try DaemonMessage.decode(Array(status.output.utf8.prefix { $0 != 10 })) else {
            throw HarnessError.commandFailed("status printed \(status.output) \(status.error)")
        }
        #expect(decoded.dns == DNSStatus(state: .none, servers: []))
        #expect(decoded.online, "no name server is no reason to be offline")
    }

    /// The resolver's configuration replaced while the daemon runs, as
    /// NetworkManager replaces it: the verdict follows.
    @Test(.timeLimit(.minutes(1)))
    func aNewResolverConfigurationIsJudgedAtOnce() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: NameServer.address)
        let daemon = try await network.startDaemon(etc: etc)
        defer { daemon.signal(SIGTERM) }
        try await network.waitForStatus("no route to the name server") { $0.dns.state == .unroutable }
        // A resolver on this host (a local dnsmasq, say): routed through lo.
        let replacement = etc.appendingPathComponent("resolv.conf.new")
        try "nameserver 127.0.0.1\n".write(to: replacement, atomically: false, encoding: .utf8)
        try await TestNetwork.sh("mv \(replacement.path) \(etc.appendingPathComponent("resolv.conf").path)")
        let local = try await network.waitForStatus(timeout: .seconds(2), "the local resolver") { $0.dns.state == .ok }
        #expect(local.dns.servers.map(\.interface) == ["lo"])
    }

    /// `nameserver fe80::1%vh2` (NetworkManager writes such lines) is asked
    /// on vh2, as glibc sends to it: judged there, `interface` vh2, and
    /// unroutable once vh2 goes down, whatever other link has a route to
    /// fe80::/64. Before, it was judged on the first such link: `ok via vh`,
    /// and still `ok` with vh2 down.
    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func aScopedLinkLocalServerIsJudgedOnItsOwnLink(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await TestNetwork.sh("ip link add vh2 netns \(network.host) type veth peer name vg2 netns \(network.gateway)")
        try await network.inGateway("link set vg2 up")
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inHost("link set vh2 up")
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: "fe80::53%vh2")
        let daemon = throughDaemon ? try await network.startDaemon(etc: etc) : nil
        defer { daemon?.signal(SIGTERM) }
        // In-process, the command reads the same files.
        let command = network.inHost(etc: throughDaemon ? nil : etc) + [
            Reachd.binary, "status", "--json", throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon"]
        func dns() async throws -> DNSStatus? {
            let line = try await Subprocess.run(command).output.split(separator: "\n").first.map { Array($0.utf8) } ?? []
            guard case .status(let status) = try? DaemonMessage.decode(line) else { return nil }
            return status.dns
        }
        let judged = try await eventually("judged on vh2", timeout: .seconds(10)) {
            try await dns().flatMap { $0.servers.first?.interface == "vh2" ? $0 : nil }
        }
        #expect(judged.state == .ok && judged.servers.map(\.address) == ["fe80::53"], "\(judged)")

        try await network.inHost("link set vh2 down")
        let down = try await eventually("not ok with vh2 down", timeout: .seconds(2)) {
            try await dns().flatMap { $0.state != .ok ? $0 : nil }
        }
        #expect(down.state == .unroutable && down.servers.first?.interface == nil, "\(down)")
    }

    /// At boot the daemon may start before systemd-resolved: /etc/resolv.conf
    /// links into a /run/systemd/resolve that does not exist yet. Once
    /// resolved makes it and writes its files, the daemon judges its
    /// servers. Before, it said `none` until it restarted, and
    /// `wait-online --dns` through it timed out. /etc/resolv.conf is
    /// resolved's link, two links that lead there (NixOS's, through
    /// /etc/static), or a file naming its stub (a copy of it).
    @Test(.timeLimit(.minutes(1)), arguments: ["a link", "two links", "a file"])
    func resolvedsFilesMadeAfterTheDaemonStartedAreRead(resolvConf way: String) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: "127.0.0.53")
        let resolvConf = etc.appendingPathComponent("resolv.conf")
        let stub = "run/systemd/resolve/stub-resolv.conf"
        switch way {
        case "a link":
            try FileManager.default.removeItem(at: resolvConf)
            try FileManager.default.createSymbolicLink(atPath: resolvConf.path, withDestinationPath: "../" + stub)
        case "two links":
            try FileManager.default.removeItem(at: resolvConf)
            let staticFolder = etc.appendingPathComponent("static")
            try? FileManager.default.removeItem(at: staticFolder)
            try FileManager.default.createDirectory(at: staticFolder, withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(
                atPath: staticFolder.appendingPathComponent("resolv.conf").path, withDestinationPath: "../../" + stub)
            try FileManager.default.createSymbolicLink(atPath: resolvConf.path, withDestinationPath: "static/resolv.conf")
        default:
            break  // the file naming the stub
        }
        let runSystemd = try network.folder("run-systemd")
        let daemon = try await network.startDaemon([], etc: etc, runSystemd: runSystemd)
        defer { daemon.signal(SIGTERM) }
        // The links lead nowhere yet; the file names the stub, the server
        // there is while resolved's own are unknown.
        try await network.waitForStatus("no server of resolved's yet") {
            way == "a file" ? $0.dns.servers.map(\.address) == ["127.0.0.53"] : $0.dns.state == .none
        }

        // As resolved writes them: its directory, then each file renamed into place.
        let resolve = try network.folder("run-systemd/resolve")
        try "nameserver 127.0.0.53\n".write(to: resolve.appendingPathComponent("stub-resolv.conf"), atomically: true, encoding: .utf8)
        try "nameserver \(NameServer.address)\n".write(to: resolve.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        let judged = try await network.waitForStatus(timeout: .seconds(2), "resolved's server judged") {
            $0.dns.servers.map(\.address) == [NameServer.address]
        }
        #expect(judged.dns.servers.first?.interface == "vh", "\(judged.dns)")
        let waited = try await network.reachd("wait-online", "--dns", "--timeout", "5", "--socket=\(network.socketPath)")
        #expect(waited.status == 0, "\(waited)")
    }

    /// Drops what reaches the gateway on port 53, from the host: a resolver
    /// that stopped answering while routes and the check server are fine.
    static func dropQueries(_ network: TestNetwork) async throws {
        try await TestNetwork.sh(
            "ip netns exec \(network.gateway) nft 'add table inet reachd_drop; "
                + "add chain inet reachd_drop input { type filter hook input priority 0; }; "
                + "add rule inet reachd_drop input meta l4proto { udp, tcp } th dport 53 drop'")
    }

    /// The check resolves its host as a step of its own: with the resolver
    /// (a real dnsmasq on the gateway) dropping queries, one check asked
    /// for finds the server at the address that last answered, and says
    /// names fail while the Internet answers, not `limited`. Before, it
    /// said `full` and nothing about names.
    @Test(.timeLimit(.minutes(1)))
    func namesThatFailWhileTheCheckServerAnswersAreFailingWithFullConnectivity() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let resolver = try await Dnsmasq(in: network, records: ["check.example": "10.77.0.1"])
        let server = try await CheckServer(in: network, answering: .init(status: 204))
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: "10.77.0.1")
        let daemon = try await network.startDaemon(["--check-url", "http://check.example:8080/generate_204"], etc: etc)
        defer { daemon.signal(SIGTERM) }
        let working = try await network.waitForStatus("full, names resolving") { $0.connectivity == .full }
        #expect(working.dns.state == .ok, "\(working.dns)")
        #expect(resolver.log.contains("check.example"), "the check asked dnsmasq: \(resolver.log)")

        try await Self.dropQueries(network)
        let asked = ContinuousClock.now
        let check = try await network.reachd("check", "--json", "--socket=\(network.socketPath)")
        #expect(check.status == 0, "\(check.error)")
        let failing = try await network.waitForStatus(timeout: .seconds(10), "names failing, the path working") {
            $0.dns.state == .failing
        }
        #expect(failing.connectivity == .full && failing.online, "\(failing)")
        #expect(ContinuousClock.now - asked < .seconds(10))
        let words = try await network.reachd("status", "--socket=\(network.socketPath)")
        #expect(words.output.contains("DNS: failing"), "\(words.output)")

        // The resolver answers again: the retry (from 5 s) finds it.
        try await TestNetwork.sh("ip netns exec \(network.gateway) nft delete table inet reachd_drop")
        let recovered = try await network.waitForStatus(timeout: .seconds(10), "names resolving again") { $0.dns.state == .ok }
        #expect(recovered.connectivity == .full)
        withExtendedLifetime((resolver, server)) {}
    }
}
