import Foundation
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

@Suite("The daemon and its clients", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct DaemonTests {
    @Test(arguments: [true, false])
    func monitorReportsAChangeWithinASecond(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon() }
        let source = throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon"
        let monitor = try network.startReachd("monitor", "--json", source)
        let first = try await eventually("the monitor prints the current status") { monitor.outputLines.first }
        #expect(first.contains(#""online":false"#))
        #expect(first.contains(throughDaemon ? #""source":"daemon""# : #""source":"embedded""#))

        // From the kernel's word of the change (`ip -ts monitor`) to the
        // time the status the monitor printed was made: starting `ip` took
        // over a second when CI ran every suite at once, and this test's
        // own polling of the output under four busy loops 0.1 s more;
        // neither is the monitor's time.
        let kernel = try await KernelRouteMonitor(in: network, probing: "10.77.9.9", via: "vh")
        try await network.inHost("route add default via 10.77.0.1")
        let line = try await eventually("the monitor prints the change", timeout: .seconds(5)) {
            monitor.outputLines.dropFirst().first { $0.contains(#""online":true"#) }
        }
        guard case .status(let status) = try DaemonMessage.decode(Array(line.utf8)) else {
            Issue.record("not a status: \(line)")
            return
        }
        let announced = try #require(kernel.timestamps(of: "default via 10.77.0.1").first, "the kernel's word")
        let latency = status.changedAt.timeIntervalSince(announced)
        #expect(latency < 1, "took \(latency) s")
        monitor.signal(SIGTERM)
        _ = daemon
    }

    /// Socket-activated (systemd-socket-activate stands in for reachd.socket,
    /// at a path of its own), the daemon logs the path systemd bound: it
    /// logged the default path, wherever the socket was.
    @Test func aSocketActivatedDaemonLogsThePathItWasGiven() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let path = network.socketPath
        let activator = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/systemd-socket-activate", "-l", path,
            Reachd.binary, "daemon",
        ])
        defer { activator.signal(SIGTERM) }
        // The first connection starts the daemon, which answers it.
        let status = try await eventually("an answer on the passed socket") { try? daemonStatus(at: path) }
        #expect(status.source == .daemon)
        let logged = try await eventually("the listening line") { activator.errorOutput.contains("listening") ? activator.errorOutput : nil }
        #expect(logged.contains("socket.path=\(path)") && logged.contains("socket.activated=true"), "\(logged)")
    }

    /// `reachd status --no-daemon` names its namespace as the daemon does,
    /// cookie included (it left the cookie out).
    @Test func inProcessAndDaemonNameTheNamespaceAlike() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let (fromDaemon, _) = try await network.status()
        let (inProcess, _) = try await network.status(inProcess: true)
        #expect(inProcess.source == .inProcess && fromDaemon.source == .daemon)
        #expect(inProcess.network?.cookie != nil && inProcess.network == fromDaemon.network,
                "\(String(describing: inProcess.network)) \(String(describing: fromDaemon.network))")
        withExtendedLifetime(daemon) {}
    }

    @Test func badInputGetsAnErrorAndOtherClientsCarryOn() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let daemon = try await network.startDaemon()
        let (subscriber, before) = try await SocketClient.subscribed(to: network.socketPath)

        let cases: [(bytes: [UInt8], says: String)] = [
            (Array("this is not json\n".utf8), "not a JSON object"),
            (Array(#"{"op":"reboot"}"#.utf8) + [10], "unknown op \"reboot\""),
            ([0x7b, 0xc3, 0x28, 0x7d, 0x0a], "not valid UTF-8"),
            ([UInt8](repeating: UInt8(ascii: "x"), count: 5000), "longer than 4096 bytes"),
        ]
        for (bytes, says) in cases {
            let client = try SocketClient(path: network.socketPath)
            try client.send(bytes)
            guard case .error(let code, let message, _) = try await client.readMessage() else {
                Issue.record("no error for \(says)")
                continue
            }
            #expect(code == "bad_request")
            #expect(message.contains(says), "\(message)")
            #expect(try await client.readLine() == nil, "the connection is closed after an error")
        }

        try await network.inHost("route add default via 10.77.0.1")
        let after = try await subscriber.readStatus()
        #expect(after.online && after.seq > before.seq, "the subscriber still gets changes")
        #expect(try daemonStatus(at: network.socketPath).online)
        #expect(daemon.isRunning)
    }

    @Test func aSubscriberThatStopsSendingKeepsReceiving() async throws {
        // `echo '{"op":"subscribe"}' | socat - UNIX-CONNECT:...` shuts down its sending side.
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let daemon = try await network.startDaemon()
        let subscriber = try SocketClient(path: network.socketPath)
        try subscriber.send(ClientRequest.subscribe.line)
        shutdown(subscriber.fd, Int32(SHUT_WR))
        #expect(try await subscriber.readStatus().online == false)
        try await network.inHost("route add default via 10.77.0.1")
        #expect(try await subscriber.readStatus().online)

        let getter = try SocketClient(path: network.socketPath)
        try getter.send(ClientRequest.get.line)
        shutdown(getter.fd, Int32(SHUT_WR))
        #expect(try await getter.readStatus().online)
        #expect(try await getter.readLine() == nil, "a get with nothing more to ask is closed after its answer")
        _ = daemon
    }

    /// 500 containers' veth pairs came and went while a subscriber did not
    /// read: the line it was sent at last named every link the daemon saw
    /// of them (15 KB in the report), encoded again for each such
    /// subscriber at every status. It names 64 and counts the rest now.
    @Test(.timeLimit(.minutes(1)))
    func aSubscriberBehindContainerChurnIsSentNoLineOver8KiB() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let container = "\(network.host)-c"
        try await TestNetwork.sh("ip netns add \(container)")
        defer { _ = Subprocess.runBlocking(["/usr/bin/env", "ip", "netns", "del", container]) }
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGTERM) }
        let stalled = try SocketClient(path: network.socketPath)
        try stalled.send(ClientRequest.subscribe.line)
        // Named as Calico names them: cali and eleven hex digits.
        try await network.batchInHost((0..<500).flatMap { pair in
            let name = "cali" + String(0xd0c_0000_0000 + pair, radix: 16)
            return ["link add \(name) type veth peer name eth0 netns \(container)", "link del \(name)"]
        })
        // Settled: the daemon's status has no container link left.
        let last = try await network.waitForStatus("the churn is over") { !$0.interfaces.contains { $0.name.hasPrefix("cali") } }
        var longest = 0
        var received: [NetworkStatus] = []
        while received.last.map({ $0.seq < last.seq }) ?? true {
            let line = try #require(try await stalled.readLine(timeout: .seconds(10)))
            longest = max(longest, line.utf8.count)
            guard case .status(let status) = try DaemonMessage.decode(Array(line.utf8)) else { continue }
            received.append(status)
        }
        #expect(longest <= 8 * 1024, "a line of \(longest) bytes")
        let counted = received.flatMap(\.changes).contains { change in
            if case .interfaces(_, let more) = change { return more > 0 }
            return false
        }
        #expect(counted, "the lines queued behind the stalled reader were merged, and the links beyond 64 counted")
        #expect(daemon.isRunning)
    }

    @Test func aSubscriberThatNeverReadsDelaysNobodyAndGetsTheNewestState() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        // 300 addresses make every status line tens of kilobytes, so a few dozen
        // published changes overflow what a Unix socket buffers for a client.
        try await network.batchInHost((0..<300).map { "address add 10.80.\($0 / 250).\($0 % 250 + 1)/32 dev vh" })
        let daemon = try await network.startDaemon()
        let stalled = try SocketClient(path: network.socketPath)
        try stalled.send(ClientRequest.subscribe.line)
        let (reader, first) = try await SocketClient.subscribed(to: network.socketPath)
        let lineBytes = DaemonMessage.status(first).line().count

        // One `ip` at a time, each change seen by the reader before the next
        // is made, so that each is published on its own (an address added and
        // removed within one read of the daemon's is no change at all): the
        // published lines exceed 1 MiB.
        let changes = 60
        for i in 0..<changes {
            let address = "10.81.0.\(i + 1)"
            try await network.inHost("address add \(address)/32 dev vh")
            _ = try await eventually("the reading subscriber sees \(address)", timeout: .seconds(10)) { () -> Bool? in
                try await reader.readStatus().interfaces.contains { $0.addresses.contains { $0.address == address } } ? true : nil
            }
        }
        try await network.inHost("address add 10.79.0.1/32 dev vh")
        let final = try await eventually("the reading subscriber sees the last change", timeout: .seconds(20)) { () -> NetworkStatus? in
            let status = try await reader.readStatus()
            return status.interfaces.contains { $0.addresses.contains { $0.address == "10.79.0.1" } } ? status : nil
        }
        let published = Int(final.seq - first.seq)
        #expect(published * lineBytes > 1 << 20, "\(published) changes of \(lineBytes) bytes: more than a socket holds")

        // A get answers at once while the stalled client's output is full.
        let started = ContinuousClock.now
        #expect(try daemonStatus(at: network.socketPath).seq == final.seq)
        #expect(ContinuousClock.now - started < .seconds(1))

        // When it finally reads, it gets what was in flight and then the newest
        // state: far fewer lines than changes, ending with the current one.
        var received: [NetworkStatus] = []
        while received.last?.seq != final.seq { received.append(try await stalled.readStatus(timeout: .seconds(10))) }
        #expect(received.count < published / 2, "coalesced: \(received.count) lines for \(published) changes")
        #expect(daemon.isRunning)
    }

    @Test func aRouteFloodThatLeavesTheAnswerAlonePublishesNothing() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let (subscriber, before) = try await SocketClient.subscribed(to: network.socketPath)

        let routes = (0..<10_000).map { "10.\(100 + $0 / 65536).\($0 / 256 % 256).\($0 % 256)/32" }
        try await network.batchInHost(routes.map { "route add \($0) via 10.77.0.1" } + routes.map { "route del \($0)" })
        // A change that does publish, to know the daemon has read past the flood.
        try await network.inHost("address add 10.79.0.1/32 dev vh")
        let next = try await subscriber.readStatus(timeout: .seconds(20))
        #expect(next.seq == before.seq + 1, "only the marker change was published")
        #expect(next.interfaces.contains { $0.addresses.contains { $0.address == "10.79.0.1" } })
        #expect(daemon.isRunning)
    }

    @Test func anOverrunIsResynchronisedAndTheDaemonKeepsListening() async throws {
        let network = try await TestNetwork()
        // IPv6 through a link-local router: the route survives the global address.
        try await network.inHost("link set vh up", "-6 addr add fd77::2/64 dev vh nodad", "-6 route add default via fe80::1 dev vh")
        let daemon = try await network.startDaemon()
        try await network.waitForStatus("online over IPv6") { $0.ipv6.reachability == .online }

        // Stopped, the daemon cannot read: a burst of route notifications overruns
        // its receive queue and the address removal after it is dropped. Route
        // lookups are always fresh, but addresses are known only from their
        // notifications: without a resync from a fresh dump the daemon would say
        // online for ever.
        daemon.signal(SIGSTOP)
        let routes = (0..<40_000).map { "route add blackhole 10.\(100 + $0 / 65536).\($0 / 256 % 256).\($0 % 256)/32" }
        try await network.batchInHost(routes + ["address del fd77::2/64 dev vh"])
        daemon.signal(SIGCONT)

        let offline = try await network.waitForStatus(timeout: .seconds(20), "the lost removal is found by the resync") {
            $0.ipv6.reachability != .online
        }
        #expect(offline.ipv6.reason == .noUsableAddress)
        #expect(daemon.errorOutput.contains("overran"), "the overrun is logged")
        #expect(daemon.errorOutput.components(separatedBy: "overran").count - 1 == 1, "once")

        try await network.inHost("-6 addr add fd77::2/64 dev vh nodad")
        try await network.waitForStatus("still listening after the resync") { $0.ipv6.reachability == .online }
    }

    /// Online with a subscriber (and the metrics on, both forms, with a
    /// watched target), or offline with the connectivity check on: either
    /// way nothing is due, so the daemon sleeps in one poll.
    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (make test installs it)"),
        arguments: [false, true])
    func anIdleDaemonMakesNoSystemCalls(offlineWithTheCheckOn: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: !offlineWithTheCheckOn)
        let textfile = network.directory.appendingPathComponent("reachd.prom").path
        let daemon = try await network.startDaemon(
            offlineWithTheCheckOn
                ? ["--check-url", "http://10.77.0.1:8080/generate_204"]
                : ["--metrics-listen", "yes", "--metrics-textfile", textfile, "--watch", "10.77.0.1:8080"])
        let (subscriber, _) = try await SocketClient.subscribed(to: network.socketPath)
        // Every thread, two seconds of a quiet network with a subscriber attached.
        let calls = try await QuietClientTests.systemCalls(of: daemon.pid)
        #expect(calls.isEmpty, "system calls while idle:\n\(calls.joined(separator: "\n"))")
        #expect(daemon.isRunning)
        #expect(!offlineWithTheCheckOn || daemon.errorOutput.contains("check.url=http://10.77.0.1:8080/generate_204"),
                "the check is really on, or this case proves nothing")
        #expect(offlineWithTheCheckOn || daemon.errorOutput.contains("metrics.listen=http://127.0.0.1:10077/metrics"),
                "the metrics are really on, or this case proves nothing")
        withExtendedLifetime(subscriber) {}
    }

    @Test func aSecondDaemonOnTheSamePathRefusesToStart() async throws {
        let network = try await TestNetwork()
        let daemon = try await network.startDaemon()
        let second = try await network.reachd("daemon", "--socket", network.socketPath)
        #expect(second.status == 2)
        #expect(second.error.contains("another reachd daemon is already listening on \(network.socketPath)"))
        #expect(try daemonStatus(at: network.socketPath).source == .daemon, "the first one is unharmed")
        _ = daemon
    }

    @Test func aStaleSocketFromACrashedDaemonIsReplaced() async throws {
        let network = try await TestNetwork()
        let crashed = try await network.startDaemon()
        let last = try daemonStatus(at: network.socketPath).seq
        crashed.signal(SIGKILL)
        try await crashed.wait()
        #expect(FileManager.default.fileExists(atPath: network.socketPath), "a crash leaves the socket file")
        let daemon = try await network.startDaemon()
        let first = try daemonStatus(at: network.socketPath).seq
        #expect(first > last, "seq never goes backwards across a restart: \(last) then \(first)")
        _ = daemon
    }

    @Test func sigtermStopsCleanlyAndRemovesTheSocket() async throws {
        let network = try await TestNetwork()
        let daemon = try await network.startDaemon()
        let (subscriber, _) = try await SocketClient.subscribed(to: network.socketPath)
        daemon.signal(SIGTERM)
        #expect(try await daemon.wait(timeout: .seconds(5)) == 0)
        #expect(!FileManager.default.fileExists(atPath: network.socketPath))
        #expect(try await subscriber.readLine() == nil, "subscribers see the end of the stream")
    }

    @Test func aPathThatIsNotASocketIsLeftAlone() async throws {
        let network = try await TestNetwork(wired: false)
        try "precious".write(toFile: network.socketPath, atomically: true, encoding: .utf8)
        let result = try await network.reachd("daemon", "--socket", network.socketPath)
        #expect(result.status == 2)
        #expect(result.error.contains("exists and is not a socket"))
        #expect(try String(contentsOfFile: network.socketPath, encoding: .utf8) == "precious")
    }

    /// journald that stops reading (restarting, under I/O pressure) fills
    /// its socket's queue, and a blocking send held the daemon's loop in
    /// `unix_wait_for_peer`: no client was answered. Here the journal's
    /// socket is one the test binds and never reads, over the real path in
    /// a mount namespace of the daemon's own, with stderr the "journal".
    @Test func aJournalThatNeverReadsStopsNothing() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let journal = network.directory.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        let sink = try UnixSocket.bindDatagram(at: journal.appendingPathComponent("socket").path)
        defer { close(sink) }
        chmod(journal.appendingPathComponent("socket").path, 0o666)
        let setUp = #"mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal && mount --bind "$0" /run/systemd/journal && "#
            + #"export JOURNAL_STREAM="$(stat -L -c %d:%i /proc/self/fd/2)" && exec "$@""#
        let daemon = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
            setUp, journal.path, Reachd.binary, "daemon", "--socket", network.socketPath, "--metrics-listen", "yes",
        ])
        defer { daemon.signal(SIGTERM) }
        _ = try await eventually("the daemon answers") { () -> Bool? in
            guard daemon.isRunning else { throw HarnessError.commandFailed("daemon exited: \(daemon.errorOutput)") }
            return (try? daemonStatus(at: network.socketPath)) != nil ? true : nil
        }
        #expect(daemon.errorOutput.hasPrefix("<"), "logs in the journal's form: \(daemon.errorOutput.prefix(200))")
        // A thousand changes, each its own status (a batch would be read
        // as a few), each a journal entry: one process speaking rtnetlink,
        // each change once the last was published, rather than a thousand
        // `ip` processes that would load the machine under every other test.
        let flips = try await Subprocess.run([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c", Self.defaultRouteFlips, "500",
            network.socketPath,
        ], timeout: .seconds(60))
        #expect(flips.status == 0, "\(flips.error)")
        // Each get is answered at once, whatever the journal does.
        for _ in 0..<5 {
            let client = try SocketClient(path: network.socketPath)
            let asked = ContinuousClock.now
            try client.send(ClientRequest.get.line)
            _ = try await client.readStatus(timeout: .seconds(2))
            #expect(ContinuousClock.now - asked < .milliseconds(100), "answered after \(ContinuousClock.now - asked)")
        }
        let metrics = try #require(try await MetricsScrapeTests.fetch("http://127.0.0.1:10077/metrics", in: network))
        let dropped = metrics.split(separator: "\n").first { $0.hasPrefix("reachd_journal_dropped_total ") }
        #expect(dropped.flatMap { Double($0.split(separator: " ")[1]) }.map { $0 > 0 } == true,
                "counted: \(dropped ?? "none"); \(daemon.errorOutput.split(separator: "\n").count) lines logged")
        #expect(daemon.isRunning)
    }

    /// Adds and deletes `default via 10.77.0.1` ARGV[1] times over
    /// rtnetlink, each acknowledged, and each once the daemon at ARGV[2]
    /// has published the one before (a subscriber's next line).
    static let defaultRouteFlips = #"""
        import socket, struct, sys
        daemon = socket.socket(socket.AF_UNIX)
        daemon.settimeout(10)
        daemon.connect(sys.argv[2])
        daemon.sendall(b'{"op":"subscribe"}\n')
        published = daemon.makefile("rb")
        def wait_for_publishing():
            if not published.readline():
                sys.exit("the daemon closed the subscription")
        wait_for_publishing()  # the status the subscription starts from
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        def change(kind, flags, seq):
            # AF_INET, /0, table main, protocol static, scope universe, unicast.
            body = struct.pack("BBBBBBBBI", 2, 0, 0, 0, 254, 4, 0, 1, 0)
            body += struct.pack("HH", 8, 5) + socket.inet_aton("10.77.0.1")  # RTA_GATEWAY
            s.send(struct.pack("IHHII", 16 + len(body), kind, flags | 0x5, seq, 0) + body)  # REQUEST | ACK
            error = struct.unpack("i", s.recv(4096)[16:20])[0]
            if error:
                sys.exit("netlink error %d" % error)
        for i in range(int(sys.argv[1])):
            change(24, 0x600, 2 * i + 1)  # RTM_NEWROUTE, CREATE | EXCL
            wait_for_publishing()
            change(25, 0, 2 * i + 2)  # RTM_DELROUTE
            wait_for_publishing()
        """#
}
