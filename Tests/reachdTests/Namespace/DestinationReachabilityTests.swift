import Foundation
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// Per-destination reachability against the kernel's own policy routing:
/// the answers must be the ones the kernel gives the app's packets.
@Suite("Destination reachability", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct DestinationReachabilityTests {
    /// A host with no default route and an intranet route: offline for the
    /// host, the intranet server reachable, the Internet not.
    @Test(arguments: [true, false])
    func anIntranetServerIsReachableOnAHostWithoutADefaultRoute(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1")
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon() }
        let source = throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon"

        let status = try await network.reachd("status", "--short", source)
        #expect(status.status == 1, "the host is offline: \(status.output)")
        // The default socket: with no daemon there, the answer is computed
        // in-process, and stderr says so.
        let intranet = try await network.reachd(defaultSocket: network.socketPath, "reach", "10.99.1.1:8443")
        #expect(intranet.status == 0, "\(intranet.output) \(intranet.error)")
        #expect(intranet.output == "10.99.1.1:8443 reachable via vh, gateway 10.77.0.1\n")
        #expect(intranet.error.contains("computed in-process") != throughDaemon, "\(intranet.error)")

        let both = try await network.reachd("reach", "10.99.1.1", "192.0.2.80", "--json", source)
        #expect(both.status == 1, "one target is not reachable")
        let answers = try both.output.split(separator: "\n").map { line in
            guard case .destination(let status) = try DaemonMessage.decode(Array(line.utf8)) else {
                throw HarnessError.commandFailed("not a destination line: \(line)")
            }
            return status
        }
        #expect(answers.map(\.state) == [.reachable, .unreachable])
        #expect(answers[1].reason == .route(.noRoute) && answers[1].via == nil)
        #expect(answers[0].via?.source == "10.77.0.2" && answers[0].via?.table == 254)
        #expect(answers.allSatisfy { $0.source == (throughDaemon ? .daemon : .inProcess) })
        _ = daemon
    }

    /// wg-quick's full tunnel: the default route in table 51820, chosen by
    /// `not fwmark 51820 lookup 51820`, with `suppress_prefixlength 0` so
    /// that the main table's more specific routes still win. Deleting the
    /// fwmark rule moves the destination back to the main table's default
    /// in exactly one line.
    @Test func aWireGuardFullTunnelRoutesAndOneRuleMovesTheDestination() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await Self.addTunnel(network)
        let daemon = try await network.startDaemon()
        let client = try await DestinationClient(in: network)
        try client.watch("internet", "192.0.2.80:443")
        try client.watch("lan", "10.77.0.1:22")

        let internet = try await client.next()
        #expect(internet.id == "internet" && internet.via?.interface == "wg0" && internet.via?.table == 51820)
        #expect(internet.via?.source == "10.8.0.2")
        let lan = try await client.next()
        // suppress_prefixlength 0 hands the LAN's own prefix to the main table.
        #expect(lan.id == "lan" && lan.via?.interface == "vh" && lan.via?.table == 254)

        try await network.inHost("rule del not fwmark 51820 table 51820")
        let moved = try await client.next()
        #expect(moved.id == "internet" && moved.via?.interface == "vh" && moved.via?.table == 254)
        #expect(moved.via?.gateway == "10.77.0.1" && moved.seq > internet.seq)

        // Nothing else was sent: the next line is the one this change causes.
        try await network.inHost("route add blackhole 10.77.0.1/32")
        let blackholed = try await client.next()
        #expect(blackholed.id == "lan" && blackholed.reason == .route(.blackholeRoute), "\(blackholed)")
        _ = daemon
    }

    /// A blackhole route for one prefix makes its destination unreachable
    /// and sends its sibling nothing; a route flood in an unrelated table
    /// sends nobody anything.
    @Test func aBlackholedPrefixLeavesItsSiblingAndAFloodLeavesEveryoneAlone() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let client = try await DestinationClient(in: network)
        try client.watch("a", "10.50.1.1")
        try client.watch("b", "10.60.1.1")
        let first = [try await client.next(), try await client.next()]
        #expect(first.allSatisfy { $0.isReachable }, "\(first)")

        try await network.batchInHost((0..<2000).map { "route add 172.16.\($0 / 250).\($0 % 250)/32 via 10.77.0.1 table 200" })
        try await network.inHost("route add blackhole 10.50.0.0/16")
        let blackholed = try await client.next()
        #expect(blackholed.id == "a" && blackholed.state == .unreachable && blackholed.reason == .route(.blackholeRoute))
        #expect(blackholed.addresses.map(\.reason) == [.route(.blackholeRoute)])

        try await network.inHost("route add prohibit 10.60.0.0/16")
        let prohibited = try await client.next()
        #expect(prohibited.id == "b" && prohibited.reason == .route(.prohibitedRoute), "b heard nothing before: \(prohibited)")
        _ = daemon
    }

    /// Taking the link down drops its IPv4 routes without a delete
    /// notification, and a peer without carrier leaves the route in place:
    /// both must reach a watcher.
    @Test func linkDownAndCarrierLossReachAWatcher() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1")
        let daemon = try await network.startDaemon()
        let client = try await DestinationClient(in: network)
        try client.watch("intranet", "10.99.1.1")
        #expect(try await client.next().isReachable)

        try await network.inGateway("link set vg down")
        let noCarrier = try await client.next()
        #expect(noCarrier.reason == .route(.noCarrier), "\(noCarrier)")
        try await network.inGateway("link set vg up")
        #expect(try await client.next().isReachable)

        try await network.inHost("link set vh down")
        let down = try await client.next()
        #expect(down.state == .unreachable && [.route(.noRoute), .route(.linkDown)].contains(down.reason), "\(down)")
        _ = daemon
    }

    /// Rules that select on the uid or the port apply to the app's own
    /// packets: the daemon asks as the client's uid (SO_PEERCRED) and for
    /// TCP to the destination's port; in-process asks as the caller.
    @Test(arguments: [true, false])
    func uidAndPortRulesApplyAsToTheAppsPackets(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inHost(
            "route add unreachable default table 100", "rule add uidrange 4242-4242 table 100",
            "route add blackhole default table 101", "rule add ipproto tcp dport 25 table 101")
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon() }
        let source = throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon"

        let root = try await network.reachd("reach", "192.0.2.80:443", source)
        #expect(root.status == 0, "\(root.output) \(root.error)")
        let user = try await network.reachd(asUser: 4242, "reach", "192.0.2.80:443", source)
        #expect(user.status == 1 && user.output == "192.0.2.80:443 unreachable: unreachable route\n", "\(user)")
        let smtp = try await network.reachd("reach", "192.0.2.80:25", source)
        #expect(smtp.status == 1 && smtp.output == "192.0.2.80:25 unreachable: blackhole route\n", "\(smtp)")
        _ = daemon
    }

    /// A name with only IPv6 addresses (from the namespace's own /etc/hosts,
    /// which `ip netns exec` mounts): reachable over IPv6; `-4` finds no address.
    @Test(arguments: [true, false])
    func anIPv6OnlyNameIsReachableOverIPv6(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inHost("-6 addr add fd77::2/64 dev vh nodad", "-6 route add fd99::/64 via fd77::1")
        let hosts = URL(fileURLWithPath: "/etc/netns/\(network.host)")
        try FileManager.default.createDirectory(at: hosts, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: hosts) }
        try "127.0.0.1 localhost\nfd99::10 v6only.test\n".write(
            to: hosts.appendingPathComponent("hosts"), atomically: true, encoding: .utf8)
        // A name server that refuses at once: a missing name fails fast.
        try "nameserver 127.0.0.1\n".write(
            to: hosts.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon() }
        let source = throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon"

        let reach = try await network.reachd("reach", "v6only.test", "--json", source)
        #expect(reach.status == 0, "\(reach)")
        guard case .destination(let status) = try DaemonMessage.decode(Array(reach.output.utf8.dropLast())) else {
            Issue.record("not a destination line: \(reach.output)")
            return
        }
        #expect(status.addresses.map(\.address) == ["fd99::10"])
        #expect(status.via?.family == .ipv6 && status.via?.gateway == "fd77::1" && status.via?.source == "fd77::2")
        let ipv4Only = try await network.reachd("reach", "v6only.test", "-4", source)
        #expect(ipv4Only.status == 1 && ipv4Only.output == "v6only.test:443 unresolved: the name has no address\n",
                "\(ipv4Only)")
        let missing = try await network.reachd("reach", "missing.test", source)
        #expect(missing.status == 1 && missing.output.hasPrefix("missing.test:443 unresolved: "), "\(missing)")
        _ = daemon
    }

    /// Editing /etc/hosts resolves a watched name again, through the daemon
    /// and in-process: the file replaced as editors and resolvconf do (a new
    /// file renamed over it), then rewritten in place.
    @Test(arguments: [true, false])
    func aWatchedNameFollowsEtcHosts(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1")
        let etc = try await Self.resolverFiles(network, hosts: "10.99.1.1 api.intranet.test", nameServer: "127.0.0.1")
        let hosts = etc.appendingPathComponent("hosts")
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon(etc: etc) }
        let watch = try Self.watch("api.intranet.test:22", network, etc: etc, throughDaemon: throughDaemon)
        func newest(_ addresses: [String]) -> DestinationStatus? {
            Self.newestAnswer(watch).flatMap { $0.addresses.map(\.address) == addresses ? $0 : nil }
        }
        let first = try await eventually("the name's answer from the first hosts file") { newest(["10.99.1.1"]) }
        #expect(first.state == .reachable && first.via?.interface == "vh", "\(first)")

        let replacement = etc.appendingPathComponent("hosts.new")
        try "127.0.0.1 localhost\n10.98.1.1 api.intranet.test\n".write(to: replacement, atomically: false, encoding: .utf8)
        #expect(rename(replacement.path, hosts.path) == 0)
        let moved = try await eventually("the answer once the file is replaced") { newest(["10.98.1.1"]) }
        #expect(moved.state == .unreachable && moved.reason == .route(.noRoute), "\(moved)")

        try "127.0.0.1 localhost\n10.99.1.2 api.intranet.test\n".write(to: hosts, atomically: false, encoding: .utf8)
        let rewritten = try await eventually("the answer once the file is rewritten") { newest(["10.99.1.2"]) }
        #expect(rewritten.state == .reachable, "\(rewritten)")
        #expect(rewritten.source == (throughDaemon ? .daemon : .inProcess))
        #expect(watch.isRunning, "\(watch.errorOutput)")
        watch.signal(SIGTERM)
        _ = daemon
    }

    /// A name that failed while the host had no way to its name server
    /// resolves once the path out comes up: a change of the host's path
    /// resolves watched names again, with no polling in between.
    @Test(arguments: [true, false])
    func aNameThatFailedOfflineResolvesOnceThePathComesUp(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let nameServer = try await NameServer(in: network, records: ["api.example.test": "10.99.1.1"])
        let etc = try await Self.resolverFiles(network, hosts: nil, nameServer: NameServer.address)
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon(etc: etc) }
        let watch = try Self.watch("api.example.test", network, etc: etc, throughDaemon: throughDaemon)
        let failed = try await eventually("the name fails while the name server is out of reach") {
            Self.newestAnswer(watch).flatMap { $0.state == .unresolved ? $0 : nil }
        }
        // Not "no such name": the resolver could not ask.
        #expect(failed.addresses.isEmpty && failed.reason == .resolverFailed, "\(failed)")
        try await network.inHost("route add default via 10.77.0.1")
        let resolved = try await eventually("the name resolves once the default route is up") {
            Self.newestAnswer(watch).flatMap { $0.state == .reachable ? $0 : nil }
        }
        #expect(resolved.addresses.map(\.address) == ["10.99.1.1"] && resolved.via?.interface == "vh", "\(resolved)")
        #expect(watch.isRunning, "\(watch.errorOutput)")
        watch.signal(SIGTERM)
        _ = (daemon, nameServer)
    }

    /// A copy of /etc for ``TestNetwork/inHost(etc:)`` whose resolver reads
    /// `hosts` (beside localhost) and then asks `nameServer`, once, for a
    /// second at most.
    static func resolverFiles(_ network: TestNetwork, hosts: String?, nameServer: String) async throws -> URL {
        let etc = try await network.copyOfEtc()
        // Any of them may be a link into the real /etc or /run: replaced, not written through.
        func replace(_ name: String, with text: String) throws {
            let file = etc.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: file)
            try text.write(to: file, atomically: false, encoding: .utf8)
        }
        try replace("hosts", with: "127.0.0.1 localhost\n" + (hosts.map { "\($0)\n" } ?? ""))
        try replace("resolv.conf", with: "nameserver \(nameServer)\noptions timeout:1 attempts:1\n")
        try replace("nsswitch.conf", with: "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n")
        return etc
    }

    /// `reach --watch --json TARGET`, through the network's daemon or
    /// in-process with `etc` as /etc. Through the daemon the client never
    /// sees the copy: the daemon resolves.
    static func watch(_ target: String, _ network: TestNetwork, etc: URL, throughDaemon: Bool) throws -> Subprocess {
        try Subprocess(
            network.inHost(etc: throughDaemon ? nil : etc)
                + [Reachd.binary, "reach", "--watch", "--json",
                   throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon", target])
    }

    /// The newest answer a `reach --watch --json` printed.
    static func newestAnswer(_ watch: Subprocess) -> DestinationStatus? {
        for line in watch.outputLines.reversed() {
            if case .destination(let status)? = try? DaemonMessage.decode(Array(line.utf8)) { return status }
        }
        return nil
    }

    /// `printf '{"op":"reach",...}' | socat ...`: a client that has said all
    /// it will is closed once its name's answer is written, not kept until
    /// the idle limit (10 s) runs out.
    @Test func aReachThatSaidAllItWillIsClosedAfterItsAnswer() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let hosts = URL(fileURLWithPath: "/etc/netns/\(network.host)")
        try FileManager.default.createDirectory(at: hosts, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: hosts) }
        try "127.0.0.1 localhost\n10.77.0.1 gateway.test\n".write(
            to: hosts.appendingPathComponent("hosts"), atomically: true, encoding: .utf8)
        let daemon = try await network.startDaemon()
        let client = try await SocketClient(in: network, path: network.socketPath)
        try client.send(#"{"op":"reach","target":"gateway.test"}"# + "\n")
        shutdown(client.fd, Int32(SHUT_WR))
        let answer = try await client.readLine()
        #expect(answer?.contains(#""state":"reachable""#) == true, "\(answer ?? "nil")")
        #expect(try await client.readLine(timeout: .seconds(3)) == nil, "closed after the answer")
        _ = daemon
    }

    /// The limits answer with an error line that names the flag, and leave
    /// the connection and its other watches alone; so do a reused id, an
    /// unknown id and a target that is not one.
    @Test func refusedWatchesSayWhyAndChangeNothing() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon("--max-watches-per-connection", "2")
        let client = try await DestinationClient(in: network)
        try client.watch("one", "10.50.1.1")
        _ = try await client.next()
        try client.socket.send(#"{"op":"watch","id":"one","target":"10.50.1.2"}"# + "\n")
        #expect(try await client.nextLine()?.contains(#""code":"duplicate_id""#) == true)
        try client.socket.send(#"{"op":"watch","id":"bad","target":"a..b"}"# + "\n")
        let bad = try await client.nextLine()
        #expect(bad?.contains(#""code":"bad_destination""#) == true && bad?.contains(#""id":"bad""#) == true)
        try client.socket.send(#"{"op":"unwatch","id":"nope"}"# + "\n")
        #expect(try await client.nextLine()?.contains(#""code":"unknown_id""#) == true)
        try client.watch("two", "10.60.1.1")
        _ = try await client.next()
        try client.watch("three", "10.70.1.1")
        let refused = try await client.nextLine()
        #expect(refused?.contains(#""code":"too_many_watches""#) == true, "\(refused ?? "")")
        #expect(refused?.contains("--max-watches-per-connection") == true)

        // Still watching: "one" hears its blackhole; after an unwatch, "two" hears nothing.
        try client.socket.send(#"{"op":"unwatch","id":"two"}"# + "\n")
        try await network.inHost("route add blackhole 10.60.0.0/16", "route add blackhole 10.50.0.0/16")
        let one = try await client.next()
        // Its own target: the reused id's 10.50.1.2 replaced nothing.
        #expect(one.id == "one" && one.target == "10.50.1.1:443" && one.reason == .route(.blackholeRoute), "\(one)")
        _ = daemon
    }

    /// `wait-online --host` returns when the intranet server becomes
    /// reachable, though the host never gets a default route; and times out
    /// naming the server it waited for.
    @Test(arguments: [true, false])
    func waitOnlineWaitsForAServerBehindAVPN(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon() }
        let source = throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon"
        let timedOut = try await network.reachd("wait-online", "--host", "10.99.1.1:22", "--timeout", "1", source)
        #expect(timedOut.status == 1 && timedOut.error.contains("10.99.1.1:22 unreachable: no route"), "\(timedOut)")

        let waiting = try network.startReachd("wait-online", "--host", "10.99.1.1:22", "--host", "10.77.0.1",
                                              "--timeout", "20", source)
        #expect(try await holdsThroughout(.milliseconds(300)) { waiting.isRunning }, "no route to 10.99.1.1 yet")
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1")
        #expect(try await waiting.wait(timeout: .seconds(10)) == 0, "\(waiting.errorOutput)")
        #expect(waiting.output == "10.99.1.1:22 reachable via vh, gateway 10.77.0.1\n10.77.0.1:443 reachable via vh\n")
        #expect(try await network.reachd("status", "--short", source).status == 1, "the host is still offline")
        _ = daemon
    }

    /// The daemon restarts under `reach --watch`: from the default socket
    /// the watch goes on in-process at once, and back to the daemon once one
    /// answers again; with `--socket` the daemon it named went away, and it
    /// says so and exits 2 (it reconnected silently, the README promising
    /// otherwise).
    @Test(arguments: [true, false])
    func aWatchOutlivesTheDaemon(namedSocket: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        var daemon = try await network.startDaemon()
        let watch = namedSocket
            ? try network.startReachd("reach", "--watch", "--json", "--socket", network.socketPath, "10.99.1.1")
            : try network.startReachd(defaultSocket: network.socketPath, ["reach", "--watch", "--json", "10.99.1.1"])
        let first = try await eventually("the first answer") { watch.outputLines.first }
        #expect(first.contains(#""reason":"no_route""#) && first.contains(#""source":"daemon""#), "\(first)")
        daemon.signal(SIGTERM)
        _ = try await daemon.wait()
        if namedSocket {
            #expect(try await watch.wait(timeout: .seconds(5)) == 2, "\(watch.errorOutput)")
            #expect(watch.errorOutput.contains("the daemon went away"), "\(watch.errorOutput)")
            return
        }
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1")
        let reachable = try await eventually("the change, from the process", timeout: .seconds(15)) {
            watch.outputLines.last { $0.contains(#""state":"reachable""#) }
        }
        #expect(reachable.contains(#""source":"embedded""#), "\(reachable)")
        #expect(watch.isRunning, "\(watch.errorOutput)")
        let linesInProcess = watch.outputLines.count
        daemon = try await network.startDaemon()
        let fromDaemon = try await eventually("the daemon's answer once it runs again", timeout: .seconds(15)) {
            watch.outputLines.dropFirst(linesInProcess).first
        }
        #expect(fromDaemon.contains(#""state":"reachable""#) && fromDaemon.contains(#""source":"daemon""#), "\(fromDaemon)")
        #expect(watch.errorOutput.contains("following the daemon again"), "\(watch.errorOutput)")
        try await network.inHost("route del 10.99.0.0/16 via 10.77.0.1")
        let gone = try await eventually("the route's removal, from the daemon") {
            watch.outputLines.dropFirst(linesInProcess + 1).first
        }
        #expect(gone.contains(#""reason":"no_route""#) && gone.contains(#""source":"daemon""#), "\(gone)")
        watch.signal(SIGTERM)
        _ = daemon
    }

    /// A watch the daemon refuses (over its limit) is answered in-process
    /// while the daemon answers the others: the command says the refusal
    /// once, and does not claim to switch sources at every change.
    @Test func aRefusedWatchIsAnsweredBesideTheDaemonWithoutSwitchingSources() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let daemon = try await network.startDaemon("--max-watches-per-connection", "1")
        let watch = try network.startReachd(
            defaultSocket: network.socketPath, ["reach", "--watch", "--json", "10.99.1.1", "10.98.1.1"])
        _ = try await eventually("both answers") {
            let lines = watch.outputLines
            return lines.contains { $0.contains("10.99.1.1") && $0.contains(#""source":"daemon""#) }
                && lines.contains { $0.contains("10.98.1.1") && $0.contains(#""source":"embedded""#) } ? true : nil
        }
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1", "route add 10.98.0.0/16 via 10.77.0.1")
        _ = try await eventually("both changes") {
            watch.outputLines.filter { $0.contains(#""state":"reachable""#) }.count == 2 ? true : nil
        }
        #expect(watch.errorOutput.components(separatedBy: "too_many_watches").count == 2, "said once: \(watch.errorOutput)")
        #expect(!watch.errorOutput.contains("following netlink in-process"), "\(watch.errorOutput)")
        #expect(!watch.errorOutput.contains("following the daemon again"), "\(watch.errorOutput)")
        watch.signal(SIGTERM)
        _ = daemon
    }

    /// wg-quick's table with the tunnel's peer address: the interface is a
    /// veth to the gateway namespace (there are no WireGuard links here),
    /// which is all the routing needs.
    static func addTunnel(_ network: TestNetwork) async throws {
        try await TestNetwork.sh("ip link add wg0 netns \(network.host) type veth peer name wgp netns \(network.gateway)")
        try await network.inGateway("link set wgp up", "addr add 10.8.0.1/24 dev wgp")
        try await network.inHost(
            "link set wg0 up", "addr add 10.8.0.2/24 dev wg0", "route add default via 10.8.0.1 table 51820",
            "rule add not fwmark 51820 table 51820", "rule add table main suppress_prefixlength 0")
    }
}
