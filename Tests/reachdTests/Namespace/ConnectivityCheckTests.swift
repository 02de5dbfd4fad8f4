import Foundation
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's connectivity check against a check server in the gateway
/// namespace, as a captive portal or a dead uplink would answer.
@Suite("Connectivity check in network namespaces", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct ConnectivityCheckTests {
    /// An online network, its check server, and a daemon checking against it,
    /// with the default 5 s timeout: these tests judge answers, and on two busy
    /// cores the server may take a while to give one.
    static func daemon(
        answering answer: CheckServer.Answer, defaultRoute: Bool = true, _ extra: String...
    ) async throws -> (TestNetwork, CheckServer, Subprocess) {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: defaultRoute)
        let server = try await CheckServer(in: network, answering: answer)
        let daemon = try await network.startDaemon(["--check-url", server.url] + extra)
        return (network, server, daemon)
    }

    /// A storm of failure reports: a thousand `check` requests, each on a
    /// connection closed as soon as it is written, within a second, make
    /// the daemon probe once (and not zero times: before, a request whose
    /// client had hung up was never read); then a thousand
    /// ``ReachabilityMonitor/reportFailure()`` calls make one more.
    @Test(.timeLimit(.minutes(1)))
    func aThousandFailureReportsInASecondMakeOneProbe() async throws {
        let (network, server, daemon) = try await Self.daemon(answering: .init(status: 204))
        try await network.waitForStatus("the first probe") { $0.connectivity == .full }
        let monitor = ReachabilityMonitor(source: .daemon, socketPath: network.socketPath)
        let storms: [(String, () throws -> Void)] = [
            ("requests on connections", { try SocketClient(path: network.socketPath).send(#"{"op":"check"}"# + "\n") }),
            ("reportFailure()", { monitor.reportFailure() }),
        ]
        for (what, report) in storms {
            let before = server.requests
            let storm = ContinuousClock.now
            for _ in 0..<1000 { try report() }
            #expect(ContinuousClock.now - storm < .seconds(1), "\(what): the storm took \(ContinuousClock.now - storm)")
            // The requested probe is due 5 s after the last began at the latest.
            _ = try await eventually("the probe \(what) asked for", timeout: .seconds(8)) {
                server.requests > before ? true : nil
            }
            #expect(try await holdsThroughout(.seconds(2)) { server.requests == before + 1 },
                    "\(what): one probe for IPv4, the only family online: \(server.requests - before)")
        }
        #expect(daemon.isRunning)
        withExtendedLifetime(monitor) {}
    }

    @Test func a204IsFullAndOnline() async throws {
        let (network, server, daemon) = try await Self.daemon(answering: .init(status: 204))
        let status = try await network.waitForStatus("the check answers") { $0.connectivity != .unknown }
        #expect(status.connectivity == .full && status.online && status.portalURL == nil, "\(status)\n\(daemon.errorOutput.suffix(1500))")
        #expect(server.requests == 1)
        withExtendedLifetime((server, daemon)) {}
    }

    @Test func aRedirectIsAPortalWithItsSignInURLAndNotOnline() async throws {
        let (network, server, daemon) = try await Self.daemon(
            answering: .init(status: 302, headers: ["Location": "http://portal.example/login"]))
        let status = try await network.waitForStatus("the check answers") { $0.connectivity != .unknown }
        #expect(status.connectivity == .portal && status.portalURL == "http://portal.example/login", "\(status)\n\(daemon.errorOutput.suffix(1500))")
        #expect(!status.online && status.reachability == .online, "routes say online; the Internet does not answer")
        let result = try await network.reachd("status", "--socket", network.socketPath)
        #expect(result.status == 1 && result.output.contains("sign in at http://portal.example/login"), "\(result.output)")
        // The words lead with what the exit code says: not "online".
        #expect(result.output.hasPrefix("State: portal routed via vh, gateway 10.77.0.1\n"), "\(result.output)")
        let short = try await network.reachd("status", "--short", "--socket", network.socketPath)
        #expect(short.status == 1 && short.output.hasPrefix("portal ipv4=online "), "\(short.output)")
        // wait-online waits for routes, as its help says; --connectivity for the check's full.
        let routes = try await network.reachd("wait-online", "-t", "1", "--socket", network.socketPath)
        #expect(routes.status == 0, "\(routes)")
        let full = try await network.reachd("wait-online", "-t", "1", "--connectivity", "--socket", network.socketPath)
        #expect(full.status == 1 && full.error.contains("the connectivity check to find full access"), "\(full)")
        withExtendedLifetime((server, daemon)) {}
    }

    /// A path that goes and comes back unchanged (a cable re-plugged, a Wi-Fi
    /// network with the same gateway) is unknown until probed again: the
    /// last verdict belonged to the network before.
    @Test func aPathThatComesBackIsProbedBeforeItsOldVerdictIsBelieved() async throws {
        let (network, server, daemon) = try await Self.daemon(
            answering: .init(status: 302, headers: ["Location": "http://portal.example/login"]))
        _ = try await network.waitForStatus("a portal first") { $0.connectivity == .portal }
        let (subscriber, _) = try await SocketClient.subscribed(to: network.socketPath)
        try await network.inHost("route del default")
        #expect(try await subscriber.readStatus().connectivity == .none)
        try await network.inHost("route add default via 10.77.0.1")
        let back = try await subscriber.readStatus()
        #expect(back.reachability == .online && back.connectivity == .unknown, "\(back)")
        let probed = try await subscriber.readStatus()
        #expect(probed.connectivity == .portal, "\(probed)")
        withExtendedLifetime((server, daemon)) {}
    }

    /// `printf '{"op":"check"}' | socat - UNIX-CONNECT:...`: the request, then
    /// the end of the client's input; the answer comes once the probe has, then
    /// the end of the daemon's. It was closed unanswered.
    @Test func aCheckFromAClientThatHasSaidAllItWillIsAnswered() async throws {
        let (network, server, daemon) = try await Self.daemon(answering: .init(status: 204))
        _ = try await network.waitForStatus("full first") { $0.connectivity == .full }
        let client = try SocketClient(path: network.socketPath)
        try client.send(ClientRequest.check.line)
        shutdown(client.fd, Int32(SHUT_WR))
        #expect(try await client.readStatus(timeout: .seconds(10)).connectivity == .full)
        #expect(try await client.readLine() == nil, "closed once answered")
        withExtendedLifetime((server, daemon)) {}
    }

    /// The rate limit on `{"op":"check"}` was kept per connection: a user
    /// who connected anew for each request made the daemon send thousands
    /// of probes to the check server (by default someone else's). Now it
    /// is the daemon's: one probe per family per 5 s, whoever asks.
    @Test func aFloodOfCheckRequestsOnNewConnectionsProbesOnce() async throws {
        let (network, server, daemon) = try await Self.daemon(answering: .init(status: 204))
        _ = try await network.waitForStatus("full first") { $0.connectivity == .full }
        let before = server.requests
        let flood = try await Subprocess.run(
            ["/usr/bin/env", "ip", "netns", "exec", network.host] + TestNetwork.asUser(4242) + [
                "/usr/bin/python3", "-c", """
                import socket, sys, time
                # Connections of 32 at a time (the per-user limit is 64),
                # each asking once, closed once the daemon has read them.
                sent, end = 0, time.monotonic() + 2
                while sent < 3000 and time.monotonic() < end:
                    batch = []
                    for _ in range(32):
                        s = socket.socket(socket.AF_UNIX)
                        try:
                            s.connect(sys.argv[1])
                            s.sendall(b'{"op":"check"}\\n')
                            sent += 1
                            batch.append(s)
                        except OSError:
                            s.close()
                    time.sleep(0.005)
                    for s in batch:
                        s.close()
                print(sent, flush=True)
                """, network.socketPath,
            ], timeout: .seconds(30))
        let sent = Int(flood.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(sent > 500, "the flood sent \(sent) requests: \(flood.error)")
        // Probes the flood started would answer within the check's timeout.
        #expect(try await holdsThroughout(.seconds(1)) { server.requests - before <= 1 },
                "\(server.requests - before) probes for \(sent) requests (IPv4 only is online)")
        #expect(daemon.isRunning)
    }

    @Test func theWrongBodyIsAPortal() async throws {
        let (network, server, daemon) = try await Self.daemon(
            answering: .init(status: 200, body: "<html>Welcome to Hotel Wi-Fi</html>"),
            "--check-expect", "body:NetworkManager is online")
        let status = try await network.waitForStatus("the check answers") { $0.connectivity != .unknown }
        #expect(status.connectivity == .portal && status.portalURL == nil && !status.online, "\(status)\n\(daemon.errorOutput.suffix(1500))")
        withExtendedLifetime((server, daemon)) {}
    }

    @Test func noServerIsLimitedAndItsReturnIsSeenByACheck() async throws {
        let (network, server, daemon) = try await Self.daemon(answering: .init(status: 204))
        _ = try await network.waitForStatus("full first") { $0.connectivity == .full }
        try await server.stop()
        let limited = try await network.reachd("check", "--json", "--socket", network.socketPath)
        #expect(limited.status == 1 && limited.output.contains(#""connectivity":"limited""#), "\(limited.output) \(limited.error)")
        try await server.start()
        let full = try await network.reachd("check", "--json", "--socket", network.socketPath)
        #expect(full.status == 0 && full.output.contains(#""connectivity":"full""#), "\(full.output) \(full.error)")
        withExtendedLifetime((server, daemon)) {}
    }

    @Test func noAnswerAtAllIsLimitedAfterTheTimeout() async throws {
        // As if a firewall dropped the port: nothing answers the address at all.
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon("--check-url", "http://10.77.0.99:8080/generate_204", "--check-timeout", "0.5")
        let started = ContinuousClock.now
        let status = try await network.waitForStatus("the check gives up") { $0.connectivity != .unknown }
        #expect(status.connectivity == .limited && !status.online, "\(status)\n\(daemon.errorOutput.suffix(1500))")
        #expect(ContinuousClock.now - started < .seconds(3))
        withExtendedLifetime(daemon) {}
    }

    @Test func reachdCheckProbesAgainAfterSigningIn() async throws {
        let (network, server, daemon) = try await Self.daemon(
            answering: .init(status: 302, headers: ["Location": "http://portal.example/login"]))
        _ = try await network.waitForStatus("a portal first") { $0.connectivity == .portal }
        let before = server.requests
        try server.answering(.init(status: 204))  // the user signed in
        let result = try await network.reachd("check", "--json", "--socket", network.socketPath)
        #expect(result.status == 0 && result.output.contains(#""connectivity":"full""#), "\(result.output)")
        #expect(server.requests == before + 1)
        withExtendedLifetime((server, daemon)) {}
    }

    @Test func aPathChangeIsProbedWithinASecond() async throws {
        let (network, server, daemon) = try await Self.daemon(answering: .init(status: 204), defaultRoute: false)
        let offline = try await network.status()
        #expect(offline.status.connectivity == .none && !offline.status.online)
        // Asked to check while offline, the daemon answers at once and probes
        // nothing (that nothing is scheduled is ConnectivityScheduleTests').
        let asked = try await network.reachd("check", "--socket", network.socketPath)
        #expect(asked.status == 1, "\(asked)")
        #expect(server.requests == 0, "no probe while not online by routes")

        let changed = ContinuousClock.now
        try await network.inHost("route add default via 10.77.0.1")
        _ = try await eventually("probed after the route appeared", timeout: .seconds(5), every: .milliseconds(10)) {
            server.requests == 1 ? true : nil
        }
        #expect(ContinuousClock.now - changed < .seconds(1))
        _ = try await network.waitForStatus("full") { $0.connectivity == .full && $0.online }
        withExtendedLifetime((server, daemon)) {}
    }

    @Test func anIPv6OnlyHostIsProbedOverIPv6() async throws {
        let network = try await TestNetwork()
        try await network.inHost("link set vh up", "-6 addr add fd77::2/64 dev vh nodad", "-6 route add default via fd77::1")
        let server = try await CheckServer(in: network, answering: .init(status: 204))
        let daemon = try await network.startDaemon(["--check-url", server.ipv6URL])
        let status = try await network.waitForStatus("the check answers") { $0.connectivity != .unknown }
        #expect(status.connectivity == .full && status.online && status.ipv6.reachability == .online,
                "\(status)\n\(daemon.errorOutput.suffix(1500))")
        #expect(server.requests == 1)
        withExtendedLifetime((server, daemon)) {}
    }

    @Test func withoutTheCheckConnectivityIsUnknownAndOnlineIsByRoutes() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let server = try await CheckServer(in: network, answering: .init(status: 302, headers: ["Location": "http://portal/"]))
        let daemon = try await network.startDaemon()
        let status = try await network.waitForStatus("online") { $0.reachability == .online }
        #expect(status.connectivity == .unknown && status.online)
        let check = try await network.reachd("check", "--json", "--socket", network.socketPath)
        #expect(check.status == 0 && check.output.contains(#""connectivity":"unknown""#))
        #expect(server.requests == 0)
        withExtendedLifetime((server, daemon)) {}
    }

    /// The check's timeout bounds the whole check, the name's resolution
    /// included: with a resolver that never answers (the gateway drops its
    /// queries), the first verdict is `limited` within the 1 s timeout, not
    /// after the resolver's own 10 s. Before, it took the resolver's time.
    @Test func aResolverThatHangsIsBoundedByTheCheckTimeout() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: NameServer.address)
        try "nameserver \(NameServer.address)\noptions timeout:10 attempts:1\n"
            .write(to: etc.appendingPathComponent("resolv.conf"), atomically: false, encoding: .utf8)
        let daemon = try await network.startDaemon(
            ["--check-url", "http://check.example/generate_204", "--check-timeout", "1"], etc: etc)
        let routed = ContinuousClock.now
        try await network.inHost("route add default via 10.77.0.1")
        let status = try await network.waitForStatus("the first verdict") { $0.connectivity != .unknown && $0.connectivity != .none }
        let took = ContinuousClock.now - routed
        #expect(status.connectivity == .limited && !status.online, "\(status)")
        #expect(took < .seconds(2), "within the 1 s timeout, and a poll: \(took)\n\(daemon.errorOutput.suffix(1500))")
        withExtendedLifetime(daemon) {}
    }

    /// The daemon says how soon it answers a check: its `get` answer
    /// carries it, and `reachd check` waits that and a second more. A
    /// stopped daemon costs `check` the second every command allows, with
    /// advice that fits (it runs; starting one would not help).
    @Test func checkWaitsWhatTheDaemonAnnouncesAndAStoppedOneASecond() async throws {
        let (network, server, daemon) = try await Self.daemon(answering: .init(status: 204), "--check-timeout", "7")
        let status = try await network.waitForStatus("full") { $0.connectivity == .full }
        #expect(status.check == DaemonCheck(url: server.url, answerWithin: .seconds(14)), "max(5 s, 7 s) + 7 s: \(String(describing: status.check))")
        daemon.signal(SIGSTOP)
        defer { daemon.signal(SIGCONT) }
        let started = ContinuousClock.now
        let check = try await network.reachd("check", "--socket", network.socketPath)
        let took = ContinuousClock.now - started
        #expect(check.status == 2 && took < .milliseconds(1500), "\(took): \(check)")
        #expect(check.error.contains("did not answer within 1 s") && !check.error.contains("start one"), "\(check.error)")
        withExtendedLifetime(server) {}
    }

    /// A dual-stack host whose check host answers over IPv4 and refuses
    /// over IPv6 (IPv6 `limited`, IPv4 `full`), in an IPv4 VPN-style
    /// handover (def1 routes to tun0): IPv4's new path is `unknown` until
    /// its probe answers, and `unknown` beside `limited` is `unknown`, so
    /// the host stays online. Before, each handover published `online:
    /// false, connectivity: limited` until the new path's probe answered.
    @Test(.timeLimit(.minutes(1)))
    func aHandoverOnOneFamilyNeverTurnsTheHostLimitedByTheOthersVerdict() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inHost("-6 addr add fd77::2/64 dev vh nodad", "-6 route add default via fd77::1")
        try await TestNetwork.sh("ip link add tun0 netns \(network.host) type veth peer name tunp netns \(network.gateway)")
        try await network.inGateway("link set tunp up", "addr add 10.8.0.1/24 dev tunp")
        try await network.inHost("link set tun0 up", "addr add 10.8.0.2/24 dev tun0")
        // The check server refuses IPv6 connections: IPv6 is `limited`.
        try await TestNetwork.sh(
            "ip netns exec \(network.gateway) nft 'add table inet refuse6; "
                + "add chain inet refuse6 input { type filter hook input priority 0; }; "
                + "add rule inet refuse6 input ip6 daddr fd77::1 tcp dport 8080 reject with tcp reset'")
        let etc = try await DestinationReachabilityTests.resolverFiles(
            network, hosts: "10.77.0.1 check.test\nfd77::1 check.test", nameServer: "127.0.0.1")
        let server = try await CheckServer(in: network, answering: .init(status: 204))
        let daemon = try await network.startDaemon(["--check-url", "http://check.test:\(server.port)/generate_204"], etc: etc)
        defer { daemon.signal(SIGTERM) }
        _ = try await eventually("IPv6 found limited, IPv4 full") {
            let log = daemon.errorOutput
            return log.contains("check.family=IPv6 check.names=resolved check.verdict=limited")
                && log.contains("check.family=IPv4 check.names=resolved check.verdict=full") ? true : nil
        }
        let subscriber = try SocketClient(path: network.socketPath)
        try subscriber.send(#"{"op":"subscribe","detail":"summary"}"# + "\n")
        let before = try await subscriber.readStatus()
        #expect(before.connectivity == .full && before.online, "\(before)")

        try await network.inHost("route add 0.0.0.0/1 dev tun0", "route add 128.0.0.0/1 dev tun0")
        var seen: [NetworkStatus] = []
        let end = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < end, let status = try? await subscriber.readStatus(timeout: end - .now) {
            seen.append(status)
        }
        let moved = try #require(seen.first, "the handover was published")
        #expect(moved.ipv4.path?.interface == "tun0" && moved.connectivity == .unknown && moved.online, "\(moved)")
        #expect(seen.allSatisfy { $0.online }, "online throughout: \(seen.map { "\($0.connectivity) \($0.online)" })")
        #expect(seen.last?.connectivity == .full, "the new path's probe answered: \(seen.map(\.connectivity))")
        withExtendedLifetime(server) {}
    }
}
