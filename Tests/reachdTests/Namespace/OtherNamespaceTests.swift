import Foundation
import Testing
import TestSupport
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// A socket path reaches across network namespaces: a process with a
/// network of its own (`ip netns exec`, `PrivateNetwork=yes`) can reach the
/// host's daemon. It must get its own network's answer, never the host's.
@Suite("A daemon of another network namespace", .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct OtherNamespaceTests {
    /// `reachd ARGS` in the gateway namespace (no default route there), with
    /// the host namespace's daemon as its default.
    static func inGateway(_ network: TestNetwork, _ arguments: String...) async throws
        -> (status: Int32, output: String, error: String)
    {
        try await Subprocess.run(
            ["/usr/bin/env", "\(SocketPath.environmentVariable)=\(network.socketPath)", "ip", "netns", "exec",
             network.gateway, Reachd.binary] + arguments)
    }

    @Test func statusReachWaitOnlineAndMonitorAnswerForTheirOwnNetwork() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let said = "the reachd daemon at \(network.socketPath) serves another network namespace"

        let host = try await network.reachd(defaultSocket: network.socketPath, "status", "--short")
        #expect(host.status == 0 && !host.error.contains("another network"), "the daemon's own namespace: \(host)")

        let status = try await Self.inGateway(network, "status", "--json")
        #expect(status.status == 1, "no default route in this namespace: \(status)")
        #expect(status.output.contains(#""source":"embedded""#), "\(status.output)")
        #expect(status.error.contains("\(said); computed in-process"), "\(status.error)")

        let named = try await Self.inGateway(network, "status", "--socket", network.socketPath)
        #expect(named.status == 2 && named.error.contains(said), "a daemon named for another network: \(named)")
        #expect(named.error.contains("name a daemon of this network namespace") && !named.error.contains("start one"),
                "advice that helps: \(named.error)")
        // Following it alone (a `.daemon` source) ends too: it never will answer for this network.
        let namedMonitor = try await Self.inGateway(network, "monitor", "--socket", network.socketPath)
        #expect(namedMonitor.status == 2 && namedMonitor.error.contains(said), "\(namedMonitor)")

        let reach = try await Self.inGateway(network, "reach", "198.51.100.7:443")
        #expect(reach.status == 1 && reach.output.contains("unreachable: no route"), "\(reach)")
        #expect(reach.error.contains(said), "\(reach.error)")

        let wait = try await Self.inGateway(network, "wait-online", "--timeout", "1")
        #expect(wait.status == 1, "not online here, whatever the daemon's network is: \(wait)")

        let monitor = try Subprocess(
            ["/usr/bin/env", "\(SocketPath.environmentVariable)=\(network.socketPath)", "ip", "netns", "exec",
             network.gateway, Reachd.binary, "monitor", "--json"])
        defer { monitor.signal(SIGKILL) }
        let first = try await eventually("the monitor's first status") { monitor.statuses.first }
        #expect(first.source == .inProcess && !first.online, "\(first)")
        #expect(monitor.errorOutput.contains(said), "\(monitor.errorOutput)")
        _ = daemon
    }

    /// A GLib app there, with the module installed: the module's init
    /// refuses the other network's daemon, and GLib's netlink backend, which
    /// sees the app's own network, answers.
    @Test(.enabled(if: GLibApp.available, GLibApp.reason))
    func aGLibAppGetsItsOwnNetworkFromGLibsBackend() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let host = try await GLibApp(in: network, socket: network.socketPath)
        #expect(host.ready.type == "ReachdNetworkMonitor" && host.ready.available, "beside its daemon: \(host.ready)")
        let other = try await GLibApp(in: network, socket: network.socketPath, namespace: network.gateway)
        #expect(other.ready.type == "GNetworkMonitorNetlink", "\(other.ready) \(other.process.errorOutput)")
        #expect(!other.ready.available && other.ready.connectivity == "local", "no default route there: \(other.ready)")
        _ = daemon
    }

    /// A process with only loopback (a sandbox, `PrivateNetwork=yes`, a
    /// per-uid kill switch) asked the host's daemon to `reach` a name made
    /// of its secret: the daemon resolved it with the host's resolver, a
    /// channel out through DNS. Now it answers `other_network` and no query
    /// leaves; `get` is still answered, and its `netns` says whose it is.
    @Test(.timeLimit(.minutes(1)))
    func aProcessOfAnotherNetworkGetsNoNameResolvedNorRouteLookedUp() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: "10.77.0.1")
        try await NameResolutionTests.countQueries(network)
        let daemon = try await network.startDaemon(etc: etc)
        defer { daemon.signal(SIGTERM) }
        let sandbox = "\(network.host)-sandbox"
        try await TestNetwork.sh("ip netns add \(sandbox) && ip -n \(sandbox) link set lo up")
        defer { _ = Subprocess.runBlocking(["/usr/bin/env", "ip", "netns", "del", sandbox]) }
        let asked = try await Subprocess.run([
            "/usr/bin/env", "ip", "netns", "exec", sandbox, "/usr/bin/python3", "-c", #"""
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            s.sendall(b'{"op":"reach","id":"x","target":"c2VjcmV0.exfil.test:443"}\n'
                      b'{"op":"watch","id":"y","target":"198.51.100.7:443"}\n{"op":"get"}\n')
            s.settimeout(5)
            received = b""
            while received.count(b"\n") < 3:
                chunk = s.recv(65536)
                if not chunk:
                    break
                received += chunk
            sys.stdout.write(received.decode())
            """#, network.socketPath,
        ])
        let lines = asked.output.split(separator: "\n").map { try? DaemonMessage.decode(Array($0.utf8)) }
        #expect(lines.count == 3, "\(asked)")
        let refusals = lines.compactMap { line -> String? in
            if case .error(let code, _, let id)? = line, code == "other_network" { return id }
            return nil
        }
        #expect(refusals == ["x", "y"], "\(asked.output)")
        guard case .status(let status)?? = lines.last else {
            Issue.record("no status for get: \(asked.output)")
            return
        }
        #expect(status.network?.cookie != nil, "the status names the daemon's network")
        #expect(try await holdsThroughout(.milliseconds(500), every: .milliseconds(100)) {
            try await NameResolutionTests.queriesSeen(network) == 0
        }, "no query left for the sandbox's name")
        #expect(daemon.isRunning)
    }
}
