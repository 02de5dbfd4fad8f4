import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// Handovers: the host online before and after, its way out moved. A host
/// with two uplinks (`vh` via 10.77.0.1, `vh2` via 10.78.0.1) and a
/// VPN-like link (`tun0`, on-link), IPv6 online beside them. Each handover
/// is one summary status whose changes say where the path went, one
/// `network-changed` in a GLib app on reachd's module, and one element of a
/// library monitor's `pathChanges()`, through the daemon and in-process
/// alike. Churn that moves no path (a container's veth, a DHCP renewal, an
/// RA refresh) is none of them. GLib's own netlink backend runs beside, for
/// reference.
@Suite("Handovers", .enabled(if: GLibApp.available, GLibApp.reason))
struct HandoverTests {
    struct Step {
        var name: String
        var commands: [String]
        /// The summary status's changes, in words; `nil`: a step that must
        /// publish nothing.
        var changes: [String]?
    }

    static let vh = "vh via 10.77.0.1 from 10.77.0.2"
    static let vh2 = "vh2 via 10.78.0.1 from 10.78.0.2"
    static let tun0 = "tun0 on-link from 10.8.0.2"
    static let newGateway = "vh via 10.77.0.254 from 10.77.0.2"
    static let renumbered = "vh via 10.77.0.254 from 10.77.0.3"
    static let viaLinkLocal = "vh via fe80::a from 10.77.0.3"
    static let viaOtherLinkLocal = "vh via fe80::b from 10.77.0.3"

    static func path(_ from: String, _ to: String) -> [String] { ["ipv4 path \(from) → \(to)"] }

    static let steps: [Step] = [
        Step(name: "a second uplink preferred by its metric", commands: ["route add default via 10.78.0.1 dev vh2 metric 50"],
             changes: path(vh, vh2) + resolverMoved),
        Step(name: "back to the first uplink", commands: ["route del default via 10.78.0.1 dev vh2 metric 50"],
             changes: path(vh2, vh) + resolverMoved),
        Step(name: "a container's veth pair", commands: [
            "link add vc0 type veth peer name vc1", "link set vc0 up", "link set vc1 up", "link del vc0",
        ], changes: nil),
        Step(name: "a VPN's def1 routes up", commands: ["route add 0.0.0.0/1 dev tun0", "route add 128.0.0.0/1 dev tun0"],
             changes: path(vh, tun0) + resolverMoved),
        Step(name: "the VPN's def1 routes down", commands: ["route del 0.0.0.0/1 dev tun0", "route del 128.0.0.0/1 dev tun0"],
             changes: path(tun0, vh) + resolverMoved),
        Step(name: "an RA refreshing IPv6's default route", commands: [
            "-6 route replace default via fd77::1 dev vh metric 100 expires 1800 proto ra",
        ], changes: nil),
        Step(name: "a wg-quick policy up", commands: [
            "route add default dev tun0 table 51820", "rule add not fwmark 51820 table 51820 priority 100",
        ], changes: path(vh, tun0) + resolverMoved),
        Step(name: "the wg-quick policy down", commands: [
            "rule del not fwmark 51820 table 51820 priority 100", "route del default dev tun0 table 51820",
        ], changes: path(tun0, vh) + resolverMoved),
        Step(name: "a DHCP renewal of the same address", commands: [
            "addr change 10.77.0.2/24 dev vh valid_lft 3600 preferred_lft 3600",
        ], changes: nil),
        Step(name: "a new gateway on the same link", commands: ["route replace default via 10.77.0.254 dev vh metric 100"],
             changes: path(vh, newGateway)),
        Step(name: "a DHCP renumbering", commands: [
            "addr add 10.77.0.3/24 dev vh", "route replace default via 10.77.0.254 dev vh src 10.77.0.3 metric 100",
            "addr del 10.77.0.2/24 dev vh",
        ], changes: path(newGateway, renumbered)),
        // Its gateway in RTA_VIA, not RTA_GATEWAY (babeld, some routers).
        Step(name: "an IPv4 gateway that is an IPv6 link-local", commands: [
            "-4 route replace default via inet6 fe80::a dev vh src 10.77.0.3 metric 100",
        ], changes: path(renumbered, viaLinkLocal)),
        Step(name: "another IPv6 link-local gateway", commands: [
            "-4 route replace default via inet6 fe80::b dev vh src 10.77.0.3 metric 100",
        ], changes: path(viaLinkLocal, viaOtherLinkLocal)),
    ]

    /// The daemon's name server (``resolver``) is routed as the Internet is:
    /// a handover to another link moves its queries too, which the same
    /// status says (`dns`, its state unchanged); a new gateway or source
    /// address on the same link does not. A public resolver in the same half
    /// of the address space as the family's probe (1.1.1.1), so that a
    /// def1 VPN's first route moves both: one in the other half moves with
    /// the second route, in a status of its own.
    static let resolverMoved = ["dns"]
    static let resolver = "9.9.9.9"

    static func words(_ path: NetworkPath?) -> String {
        guard let path else { return "none" }
        return "\(path.interface) " + (path.gateway.map { "via \($0)" } ?? "on-link") + " from \(path.source ?? "?")"
    }

    static func words(_ changes: [StatusChange]) -> [String] {
        changes.map { change in
            switch change {
            case .path(let family, let from, let to): "\(family.rawValue) path \(words(from)) → \(words(to))"
            case .reachability(let family, let from, let to): "\(family.rawValue) \(from.rawValue) → \(to.rawValue)"
            case .connectivity, .dns, .metered, .portalURL, .interfaces, .watched, .unrecognized: change.kind
            }
        }
    }

    /// What a monitor's `pathChanges()` yielded, in words.
    final class PathChanges: Sendable {
        final class Log: Sendable {
            let seen = Mutex<[String]>([])
        }

        let log = Log()
        let task: Task<Void, Never>

        init(_ monitor: ReachabilityMonitor) {
            let stream = monitor.pathChanges()
            let log = log
            task = Task {
                do {
                    for try await change in stream {
                        let words = "\(change.family.rawValue) path \(HandoverTests.words(change.from)) → \(HandoverTests.words(change.to))"
                        log.seen.withLock { $0.append(words) }
                    }
                } catch {}
            }
        }

        var seen: [String] { log.seen.withLock { $0 } }
        var count: Int { seen.count }
    }

    @Test func eachHandoverIsOneStatusOneSignalAndOnePathChange() async throws {
        let network = try await TestNetwork()
        try await TestNetwork.sh("""
            ip netns exec \(network.host) sysctl -qw net.ipv4.conf.all.promote_secondaries=1 net.ipv4.conf.default.promote_secondaries=1 && \
            ip link add vh2 netns \(network.host) type veth peer name vg2 netns \(network.gateway) && \
            ip link add tun0 netns \(network.host) type veth peer name tunp netns \(network.gateway)
            """)
        try await network.inGateway("link set vg2 up", "addr add 10.78.0.1/24 dev vg2", "link set tunp up", "addr add 10.8.0.1/24 dev tunp")
        try await network.inHost(
            "link set vh up", "addr add 10.77.0.2/24 dev vh", "route add default via 10.77.0.1 metric 100",
            "link set vh2 up", "addr add 10.78.0.2/24 dev vh2", "link set tun0 up", "addr add 10.8.0.2/24 dev tun0",
            "-6 addr add fd77::2/64 dev vh nodad", "-6 route add default via fd77::1 dev vh metric 100 expires 1800 proto ra")
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: Self.resolver)
        let daemon = try await network.startDaemon(etc: etc)
        let subscriber = try SocketClient(path: network.socketPath)
        try subscriber.send(#"{"op":"subscribe","detail":"summary"}"# + "\n")
        var latest = try await subscriber.readStatus()
        #expect(latest.changes.isEmpty, "a reader's first status has no changes")
        // Until both families are up as set (the first status may predate them).
        while latest.ipv6.reachability != .online || Self.words(latest.ipv4.path) != Self.vh {
            latest = try await subscriber.readStatus()
        }

        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor")
        let netlink = try await GLibApp(in: network, socket: network.socketPath, environment: ["GIO_USE_NETWORK_MONITOR=netlink"])
        #expect(netlink.ready.type == "GNetworkMonitorNetlink")
        let socket = network.socketPath
        let monitors = try await network.onThreadInHost {
            (ReachabilityMonitor(source: .daemon, socketPath: socket), ReachabilityMonitor(source: .inProcess))
        }
        for monitor in [monitors.0, monitors.1] {
            let now = try await monitor.firstStatus()
            #expect(now.changes.isEmpty, "a monitor's first status has no changes")
            _ = try await eventually("the monitor sees the set-up network") { Self.words(monitor.currentStatus?.ipv4.path) == Self.vh ? true : nil }
        }
        let throughDaemon = PathChanges(monitors.0), inProcess = PathChanges(monitors.1)

        var handovers = 0
        var glibNetlink: [String] = []
        for step in Self.steps {
            for command in step.commands { try await network.inHost(command) }
            guard let expected = step.changes else { continue }
            handovers += 1
            // The next status is this step's: one a quiet step made would come first.
            let status = try await subscriber.readStatus(timeout: .seconds(10))
            #expect(Self.words(status.changes) == expected, "\(step.name): \(status.changes)")
            #expect(status.online && status.ipv6.reachability == .online, "\(step.name): online before and after")
            let signal = try await app.signal(handovers, step.name)
            #expect(signal.argument == true && signal.available, "\(step.name): \(signal)")
            glibNetlink.append("\(step.name): \(netlink.signals.count)")
        }
        // A last quiet step, then nothing more may come.
        try await network.inHost("link add vc2 type veth peer name vc3", "link del vc2")
        let extra = try? await subscriber.readLine(timeout: .milliseconds(500))
        #expect(extra == nil, "no status after the last handover")
        #expect(app.signals.count == handovers, "one network-changed per handover: \(app.signals.count) for \(handovers)")
        // pathChanges() yields the paths alone.
        let expected = Self.steps.compactMap(\.changes).flatMap { $0 }.filter { !Self.resolverMoved.contains($0) }
        for (name, changes) in [("through the daemon", throughDaemon), ("in-process", inProcess)] {
            _ = try? await eventually("the monitor \(name) saw each handover") { changes.count >= expected.count ? true : nil }
            #expect(changes.seen == expected, "pathChanges() \(name)")
        }
        // For reference, as in the issue's table: GLib's own backend counts
        // every route it sees, the churn included.
        print("GLib's netlink backend, signals so far after each handover: \(glibNetlink.joined(separator: "; "))")
        throughDaemon.task.cancel()
        inProcess.task.cancel()
        _ = daemon
    }

    /// With the check on, a handover to another gateway is one status with
    /// the path (its verdict `unknown`), and a second a moment later where
    /// the new path's probe says `full`. GLib sees full access in both: one
    /// `network-changed`, not two (Dino and WebKit reconnect at each).
    @Test func aHandoverWithTheCheckOnIsOneSignal() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inGateway("addr add 10.77.0.254/24 dev vg")
        let server = try await CheckServer(in: network, answering: .init(status: 204))
        let daemon = try await network.startDaemon(["--check-url", server.url])
        defer { daemon.signal(SIGTERM) }
        let subscriber = try SocketClient(path: network.socketPath)
        try subscriber.send(#"{"op":"subscribe","detail":"summary"}"# + "\n")
        var latest = try await subscriber.readStatus()
        while latest.connectivity != .full { latest = try await subscriber.readStatus() }
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor" && app.ready.connectivity == "full", "\(app.ready)")

        try await network.inHost("route replace default via 10.77.0.254")
        let moved = try await subscriber.readStatus()
        #expect(Self.words(moved.changes) == Self.path(Self.vh, "vh via 10.77.0.254 from 10.77.0.2") + ["connectivity"]
                && moved.connectivity == .unknown, "\(moved.changes) \(moved.connectivity)")
        let probed = try await subscriber.readStatus()
        #expect(probed.connectivity == .full && Self.words(probed.changes) == ["connectivity"], "\(probed.changes)")
        let signal = try await app.signal(1, "the handover")
        #expect(signal.available && signal.connectivity == "full", "\(signal)")
        // The probe's status reached the app too (it reads in order); a
        // second signal would follow it at once.
        #expect(try await holdsThroughout(.seconds(1)) { app.signals.count == 1 }, "one network-changed for the handover: \(app.signals)")
        withExtendedLifetime(server) {}
    }

    static func radvdConfiguration(_ prefixes: [(prefix: String, preferred: Int)]) -> String {
        // Intervals under radvd's usual 3 s floor are allowed to a home agent.
        """
        interface vg {
            AdvSendAdvert on;
            AdvHomeAgentFlag on;
            MinRtrAdvInterval 0.5;
            MaxRtrAdvInterval 1;
            AdvDefaultLifetime 1800;
        """ + prefixes.map { "    prefix \($0.prefix) { AdvOnLink on; AdvAutonomous on; AdvPreferredLifetime \($0.preferred); AdvValidLifetime 7200; };\n" }
            .joined() + "};\n"
    }

    /// A router renumbering its IPv6 prefix (radvd: the old prefix
    /// deprecated, a new one advertised): the kernel sends from the new
    /// address, so IPv6's path changed its source. One summary status, one
    /// signal in the GLib app; the advertisements that only refresh the
    /// lifetimes before and after are none.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/radvd"), "needs radvd (make test installs it)"))
    func anIPv6RenumberingByRadvdIsOneHandover() async throws {
        let network = try await TestNetwork()
        try await TestNetwork.sh("ip netns exec \(network.gateway) sysctl -qw net.ipv6.conf.all.forwarding=1")
        try await network.bringUpIPv4(defaultRoute: true)
        let configuration = try network.file("radvd.conf", containing: Self.radvdConfiguration([("fd01::/64", 3600)]))
        let radvd = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", network.gateway, "/usr/sbin/radvd", "--nodaemon", "--logmethod", "stderr",
            "--config", configuration.path, "--pidfile", network.directory.appendingPathComponent("radvd.pid").path,
        ])
        defer { radvd.signal(SIGKILL) }
        let daemon = try await network.startDaemon()
        let subscriber = try SocketClient(path: network.socketPath)
        try subscriber.send(#"{"op":"subscribe","detail":"summary"}"# + "\n")
        var latest = try await subscriber.readStatus()
        while latest.ipv6.path?.source?.hasPrefix("fd01:") != true {
            latest = try await subscriber.readStatus(timeout: .seconds(15))
        }
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor")
        // Three seconds of advertisements that only refresh: nothing.
        let quiet = try? await subscriber.readLine(timeout: .seconds(3))
        #expect(quiet == nil, "refreshes publish nothing: \(quiet ?? "")")

        _ = try network.file("radvd.conf", containing: Self.radvdConfiguration([("fd01::/64", 0), ("fd02::/64", 3600)]))
        radvd.signal(SIGHUP)
        let renumbered = try await subscriber.readStatus(timeout: .seconds(15))
        let words = Self.words(renumbered.changes)
        #expect(words.count == 1 && words.first?.hasPrefix("ipv6 path vh via fe80:") == true
                && renumbered.ipv6.path?.source?.hasPrefix("fd02:") == true, "\(words)")
        #expect(try await app.signal(1, "the renumbering").available)
        let after = try? await subscriber.readLine(timeout: .seconds(3))
        #expect(after == nil, "one status for the renumbering: \(after ?? "")")
        #expect(app.signals.count == 1, "one network-changed: \(app.signals.count)")
        _ = daemon
    }
}
