import Foundation
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The daemon and its clients against the worst local user of a mode-0666
/// socket: floods, exhaustion, a stopped daemon, garbage. Figures are asserted
/// loosely; `make bench` (bench/torture.py) prints the exact ones.
@Suite("A hostile local user", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct HostileClientTests {
    static let nobody = 65534
    static let someoneElse = 65533

    /// Resident memory of a process, in KiB.
    static func residentKiB(_ pid: pid_t) -> Int {
        let status = readProcFile("/proc/\(pid)/status")
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    static func openDescriptors(_ pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    @Test func aPipelinedFloodDelaysNoSubscriberAndCostsNoMemory() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let daemon = try await network.startDaemon()
        let idle = Self.residentKiB(daemon.pid)
        // The reference listens before the attack starts, not in the middle of it.
        let kernel = try await KernelRouteMonitor(in: network, probing: "10.99.0.0/24", via: "vh")
        var subscribers: [SocketClient] = []
        for _ in 0..<10 { subscribers.append(try await SocketClient.subscribed(to: network.socketPath).client) }
        // One connection that never reads its answers, one that reads them all.
        let flooders = [try Flooder(path: network.socketPath, reading: false),
                        try Flooder(path: network.socketPath, reading: true)]
        defer { flooders.forEach { $0.stop() } }
        // The one that never reads is held back once its answers fill its
        // socket: that is the backpressure. The other floods throughout.
        _ = try await eventually("both flooders are flooding") {
            flooders.allSatisfy { $0.bytesSent > 20_000 } ? true : nil
        }
        let floodedBefore = flooders[1].bytesSent

        var peak = idle
        var latencies: [TimeInterval] = []
        for flip in 0..<6 {
            let online = flip % 2 == 0
            try await network.inHost(online ? "route add default via 10.77.0.1" : "route del default")
            // Each subscriber's line as it arrives; then when the kernel said so
            // (polling for that first would count the polling in the latency).
            var received: [Date] = []
            for subscriber in subscribers {
                var status = try await subscriber.readStatus(timeout: .seconds(5))
                while status.online != online { status = try await subscriber.readStatus(timeout: .seconds(5)) }
                received.append(Date())
            }
            let announced = try await eventually("the kernel announces flip \(flip)") {
                kernel.timestamps(of: "default").dropFirst(flip).first
            }
            latencies += received.map { $0.timeIntervalSince(announced) }
            peak = max(peak, Self.residentKiB(daemon.pid))
        }
        #expect(flooders[1].bytesSent > floodedBefore + 10_000, "the reading flood went on throughout")
        // Every flip reached every subscriber (before the fix, none did). How
        // fast is make bench's question (bench/torture.py, bench/latency.py):
        // make test runs every suite at once on two cores, a systemd container
        // boot among them: alone the worst flip is ~12 ms, but one CI run saw
        // 1.3 s while its neighbours ran 10x slower than alone. A starved
        // subscriber waits as long as the flood lasts, so the bound need only
        // be shorter than the flood to tell starved from served.
        let sorted = latencies.sorted()
        #expect(sorted.count == 60)
        #expect(sorted.last! < 3, "worst \(sorted.last!) s after the kernel's notification")
        #expect(peak < 2 * idle, "RSS \(idle) KiB idle, \(peak) KiB during the flood")
        #expect(try daemonStatus(at: network.socketPath).source == .daemon)
        #expect(daemon.isRunning)
    }

    /// `hold-connections.py`, run as another user: opens `count`
    /// connections and reports what the daemon did with them.
    static let holder = packageRoot.appendingPathComponent("Tests/reachdTests/Harness/hold-connections.py").path

    struct Held: Decodable {
        let kept: Int
        let refused: Int
        let message: String
    }

    static func hold(_ count: Int, on network: TestNetwork, as user: Int) async throws -> (Subprocess, Held) {
        let holder = try Subprocess(TestNetwork.asUser(user) + ["/usr/bin/python3", holder, network.socketPath, "\(count)"])
        let line = try await eventually("the holder reports", timeout: .seconds(30)) { holder.outputLines.first }
        return (holder, try JSONDecoder().decode(Held.self, from: Data(line.utf8)))
    }

    @Test(arguments: [96, nil] as [Int?])
    func oneUserHoldingConnectionsLocksNobodyElseOut(descriptorLimit: Int?) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon(descriptorLimit: descriptorLimit)
        let (holder, held) = try await Self.hold(200, on: network, as: Self.nobody)
        defer { holder.signal(SIGKILL) }
        let perUser = descriptorLimit == nil ? 64 : 8
        #expect(held.kept == perUser, "\(held)")
        #expect(held.refused > 0)
        #expect(held.message.contains("user \(Self.nobody) already has \(perUser) connections"), "\(held.message)")

        for user in [Self.someoneElse, 0] {
            // Locked out, the named daemon is an error (exit 2): refused, or
            // not answering within the client's 1 s. The whole command, a
            // process started under make test's load, took up to 1.56 s.
            let started = ContinuousClock.now
            let result = try await network.reachd(asUser: user, "status", "--json", "--socket", network.socketPath)
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(result.status == 0, "\(result.error)")
            #expect(result.output.contains(#""source":"daemon""#), "user \(user) is served by the daemon: \(result.error)")
        }
        #expect(daemon.isRunning)
    }

    @Test func beyondTheCapEveryConnectionIsAnsweredAndClosedNotQueued() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon("--max-clients", "4")
        var subscribers: [SocketClient] = []
        for _ in 0..<4 { subscribers.append(try await SocketClient.subscribed(to: network.socketPath).client) }
        for _ in 0..<20 {
            let client = try SocketClient(path: network.socketPath)
            guard case .error(let code, let message, _) = try await client.readMessage(timeout: .seconds(1)) else {
                Issue.record("a connection beyond the cap got no error")
                continue
            }
            #expect(code == "too_many_clients")
            #expect(message.contains("at most 4 clients"), "\(message)")
            #expect(try await client.readLine(timeout: .seconds(1)) == nil, "and is closed")
        }
        #expect(daemon.errorOutput.components(separatedBy: "refusing connections").count - 1 == 1,
                "one warning for the episode, not one per refusal")
        _ = subscribers
    }

    @Test(arguments: [false, true])
    func aStoppedDaemonCostsClientsAtMostASecond(fullListenQueue: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        daemon.signal(SIGSTOP)
        defer { daemon.signal(SIGCONT) }
        // A stopped daemon's kernel still queues connections, up to the backlog
        // (SOMAXCONN): filled by a helper with descriptors of its own, so this
        // process, shared with other suites, never runs short.
        var filler: Subprocess?
        if fullListenQueue {
            let fill = #"""
                import signal, socket, sys
                held = []
                while True:
                    s = socket.socket(socket.AF_UNIX)
                    s.setblocking(False)
                    try:
                        s.connect(sys.argv[1])
                    except OSError:  # EAGAIN: the queue is full (or this helper is out of descriptors)
                        break
                    held.append(s)
                print(len(held), flush=True)
                signal.pause()
                """#
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            let helper = try Subprocess(["/usr/bin/prlimit", "--nofile=\(limit.rlim_max)", "/usr/bin/python3", "-c", fill, network.socketPath])
            filler = helper
            let queued = try await eventually("the listen queue is full") { helper.outputLines.first.flatMap { Int($0) } }
            #expect(queued > 100, "\(queued) queued")
        }
        defer { filler?.signal(SIGKILL) }

        // What the stopped daemon costs: the command's time less the same
        // command's where no daemon's socket exists, in the same run, so
        // that a loaded machine's start-up of `ip netns exec` and the
        // command (CI once took 1.53 s in all) counts on neither side. The
        // quicker of two runs each: a machine's load only ever adds (beside
        // four busy loops one run cost 1.375 s).
        var alone = Duration.seconds(60), took = Duration.seconds(60)
        var status: (status: Int32, output: String, error: String) = (0, "", "")
        for _ in 0..<2 {
            var started = ContinuousClock.now
            _ = try await network.reachd(defaultSocket: network.directory.appendingPathComponent("none.sock").path, "status", "--json")
            alone = min(alone, ContinuousClock.now - started)
            started = ContinuousClock.now
            status = try await network.reachd(defaultSocket: network.socketPath, "status", "--json")
            took = min(took, ContinuousClock.now - started)
        }
        let cost = took - alone
        #expect(cost < .milliseconds(1300), "status took \(took), \(alone) with no daemon at all")
        #expect(status.status == 0 && status.output.contains(#""source":"embedded""#))
        #expect(status.error.contains("did not answer within 1 s"), "says why: \(status.error)")

        let started = ContinuousClock.now
        let wait = try await network.reachd(defaultSocket: network.socketPath, "wait-online", "--timeout", "10")
        #expect(wait.status == 0, "an online host is online whatever the daemon does: \(wait.error)")
        #expect(ContinuousClock.now - started < .seconds(3))

        let monitor = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        defer { monitor.signal(SIGKILL) }
        let first = try await eventually("the monitor follows netlink in-process", timeout: .seconds(3)) {
            monitor.outputLines.first
        }
        #expect(first.contains(#""source":"embedded""#) && first.contains(#""online":true"#))
    }

    @Test func aRefusedMonitorBacksOffAndFollowsNetlinkMeanwhile() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let refusing = try FakeDaemon(answering: FakeDaemon.refusing)
        let monitor = try network.startReachd(defaultSocket: refusing.path, "monitor", "--json")
        defer { monitor.signal(SIGKILL) }
        let first = try await eventually("a status from in-process") { monitor.outputLines.first }
        #expect(first.contains(#""source":"embedded""#) && first.contains(#""online":true"#))
        // Doubling from 100 ms: the waits between attempts, read from the
        // daemon's side, not counted over a fixed sleep.
        let times = try await eventually("four attempts", timeout: .seconds(5)) {
            refusing.connectionTimes.count >= 4 ? refusing.connectionTimes : nil
        }
        // Each time is when the fake daemon's thread took the connection: one
        // taken late under load shortens the gap before the next (make test
        // once read 80 ms for the first 100), but the three waits together
        // lose only that one delay.
        let gaps = zip(times.dropFirst(), times).map { ($0 - $1) / .milliseconds(1) }
        for (gap, wait) in zip(gaps, [100.0, 200, 400]) {
            #expect(gap >= wait * 0.7 && gap < wait * 3, "waits \(gaps) ms; the backoff doubles from 100 ms")
        }
        #expect(gaps.prefix(3).reduce(0, +) >= 700 * 0.9, "waits \(gaps) ms; together at least 630 of the 700 ms")
        let warnings = monitor.errorOutput.split(separator: "\n").filter { $0.contains("too_many_clients") }
        #expect(warnings.count == 1, "one warning, not one per attempt:\n\(monitor.errorOutput)")
    }

    @Test func idleClientsAreClosedAndSubscribersAreNot() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let daemon = try await network.startDaemon("--idle-timeout", "0.5")
        let (subscriber, _) = try await SocketClient.subscribed(to: network.socketPath)
        let silent = try SocketClient(path: network.socketPath)
        let unread = try Flooder(path: network.socketPath, reading: false)
        defer { unread.stop() }

        #expect(try await silent.readLine(timeout: .seconds(3)) == nil, "a client that says nothing is closed")
        _ = try await eventually("a client that never reads its answers is closed", timeout: .seconds(5)) {
            unread.wasClosed ? true : nil
        }
        // Twice the idle timeout, and the subscriber's connection stays.
        #expect(try await holdsThroughout(.seconds(1), every: .milliseconds(100)) {
            try await network.connections(to: network.socketPath, fromTheTest: true) == 1
        }, "the daemon kept only the subscriber's connection")
        try await network.inHost("route add default via 10.77.0.1")
        #expect(try await subscriber.readStatus().online, "a quiet subscriber is kept")
        #expect(daemon.isRunning)
    }

    /// Fills `slow`'s socket with link churn (full statuses of up to 240
    /// links), moves the default route to another gateway while it is full,
    /// and churns again; then reads what it was sent, up to the daemon's
    /// status once settled.
    static func handoverBehindChurn(_ network: TestNetwork, _ slow: SocketClient) async throws -> [NetworkStatus] {
        try await network.batchInHost((0..<120).map { "link add vc\($0) type veth peer name vd\($0)" })
        // Full: what waits for it stops growing, the daemon holding the rest.
        var waiting = 0
        _ = try await eventually("the subscriber's socket is full") { () -> Bool? in
            var now: Int32 = 0
            _ = ioctl(slow.fd, UInt(FIONREAD), &now)
            defer { waiting = Int(now) }
            return now > 50_000 && Int(now) == waiting ? true : nil
        }
        try await network.inHost("route replace default via 10.77.0.254")
        try await network.batchInHost((0..<120).map { "link del vc\($0)" })
        let settled = try await eventually("the daemon is through the churn") { () -> NetworkStatus? in
            guard let status = try? daemonStatus(at: network.socketPath), status.interfaces.count == 2 else { return nil }
            return status
        }
        var seen: [NetworkStatus] = []
        while seen.last?.seq != settled.seq || seen.last?.describesSameNetwork(as: settled) != true {
            seen.append(try await slow.readStatus(timeout: .seconds(10)))
        }
        return seen
    }

    /// A connectivity check asked for by a subscriber is answered with the
    /// status, which replaces a news line still queued for it: the answer
    /// must tell that line's handover (the review found it sent as a
    /// reader's first, with no changes, and every later line after it too).
    @Test func aCheckAnswerToASlowSubscriberKeepsTheHandoverItReplaces() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let server = try await CheckServer(in: network, answering: .init(status: 204))
        let daemon = try await network.startDaemon(["--check-url", server.url])
        _ = try await network.waitForStatus("the check answers") { $0.connectivity == .full }
        let (slow, _) = try await SocketClient.subscribed(to: network.socketPath)
        // Within 5 s of the first probe: answered by the next, after the handover.
        try slow.send(#"{"op":"check"}"# + "\n")
        let seen = try await Self.handoverBehindChurn(network, slow)
        let handovers = seen.flatMap(\.pathChanges).filter { $0.family == .ipv4 }
        #expect(handovers.count == 1 && handovers.first?.to?.gateway == "10.77.0.254",
                "the handover, once: \(handovers.map { ($0.from?.gateway, $0.to?.gateway) })")
        withExtendedLifetime((server, daemon)) {}
    }

    /// A subscriber slower than the network is sent the newest status, not
    /// every one; a handover in a status it never got must still reach it:
    /// the status it is sent instead says that change too, from where the
    /// subscriber last was. Here its socket fills with link churn (full
    /// statuses of up to 240 links), a new gateway follows while it is
    /// full, and more churn replaces the queued status that carried it.
    @Test func aSlowSubscriberIsToldOfAHandoverInAStatusItMissed() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let (slow, first) = try await SocketClient.subscribed(to: network.socketPath)
        #expect(first.changes.isEmpty)
        let seen = try await Self.handoverBehindChurn(network, slow)
        let gaps = zip(seen, seen.dropFirst()).filter { $1.seq != $0.seq + 1 }.count
        #expect(gaps > 0, "the subscriber was slow enough to miss statuses (\(seen.count) read)")
        let handovers = seen.flatMap(\.pathChanges).filter { $0.family == .ipv4 }
        #expect(handovers.count == 1 && handovers.first?.from?.gateway == "10.77.0.1" && handovers.first?.to?.gateway == "10.77.0.254",
                "the handover, once: \(handovers.map { ($0.from?.gateway, $0.to?.gateway) })")
        #expect(daemon.isRunning)
    }

    @Test func aLastRequestWithoutANewlineIsAnswered() async throws {
        let network = try await TestNetwork()
        let daemon = try await network.startDaemon()
        let client = try SocketClient(path: network.socketPath)
        // printf '{"op":"get"}' | socat - UNIX-CONNECT:...
        try client.send(#"{"op":"get"}"#)
        shutdown(client.fd, Int32(SHUT_WR))
        #expect(try await client.readStatus().source == .daemon)
        #expect(try await client.readLine() == nil)
        #expect(daemon.isRunning)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (make test installs it)"))
    func theSocketIsWorldWritableWhateverTheUmaskAndNoPathIsChmodded() async throws {
        let network = try await TestNetwork(wired: false)
        // A chmod by path after bind would follow whatever a user who can write
        // to the directory put there meanwhile (a symlink to /etc/shadow, say).
        let trace = network.directory.appendingPathComponent("trace").path
        let daemon = try Subprocess(["/bin/sh", "-c", """
            umask 077 && exec /usr/bin/strace -f -qq -o \(trace) -e trace=chmod,fchmodat,fchmod \
            \(Reachd.binary) daemon --socket \(network.socketPath)
            """])
        defer {
            // strace detaches from its tracee when stopped: stop the daemon itself.
            let children = readProcFile("/proc/\(daemon.pid)/task/\(daemon.pid)/children")
            // SIGKILL: a traced process's SIGTERM goes to strace first, which may
            // detach without passing it on.
            for child in children.split(separator: " ").compactMap({ pid_t($0) }) { kill(child, SIGKILL) }
            daemon.signal(SIGTERM)
        }
        _ = try await daemonAnswers(at: network.socketPath)
        var info = stat()
        #expect(lstat(network.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o666, "mode \(String(info.st_mode & 0o777, radix: 8))")
        let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        #expect(calls.allSatisfy { $0.contains("fchmod(") }, "only the socket's own descriptor is chmodded: \(calls)")
        #expect(calls.contains { $0.contains("fchmod(") && $0.contains("0666") })
    }

    @Test func randomInputFromManyConnectionsNeverHurtsTheDaemon() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon("--idle-timeout", "0.5")
        let descriptors = Self.openDescriptors(daemon.pid)
        let idle = Self.residentKiB(daemon.pid)
        var generator = SeededGenerator(seed: 7)
        var answered = 0
        for _ in 0..<20 {
            var batch: [SocketClient] = []
            for _ in 0..<25 {
                let client = try SocketClient(path: network.socketPath)
                try? client.send(generator.bytes(maxLength: 5000))
                if Bool.random(using: &generator) { shutdown(client.fd, Int32(SHUT_WR)) }
                batch.append(client)
            }
            for client in batch {
                // Whatever was sent: a status, an error, or a close when idle; never a hang.
                if let line = try await client.readLine(timeout: .seconds(3)) {
                    answered += 1
                    #expect(line.hasPrefix(#"{"#), "\(line.prefix(80))")
                }
            }
        }
        #expect(answered > 0)
        #expect(daemon.isRunning)
        _ = try await eventually("every connection is released") {
            Self.openDescriptors(daemon.pid) <= descriptors ? true : nil
        }
        #expect(Self.residentKiB(daemon.pid) < 2 * idle)
        #expect(try daemonStatus(at: network.socketPath).online)
    }

    /// Each pipelined `check` added a waiter: 8 connections pipelining
    /// them kept the daemon's core at 100% for as long as they went on, and
    /// another user's `get` took up to 18.9 ms (24 ms median here). A
    /// connection awaiting a check is no longer read: one waiter each,
    /// nothing to do, and a get costs what it costs without the flood.
    @Test(.timeLimit(.minutes(1)))
    func pipelinedChecksCostOneWaiterAConnection() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let server = try await CheckServer(in: network, answering: .init(status: 204))
        let daemon = try await network.startDaemon(["--check-url", server.url])
        defer { daemon.signal(SIGTERM) }
        try await network.waitForStatus("full") { $0.connectivity == .full }
        /// The median of ten gets, 200 ms apart.
        func medianGet() async throws -> Duration {
            var gets: [Duration] = []
            for _ in 0..<10 {
                gets.append(try timedDaemonStatus(at: network.socketPath).took)
                try await Task.sleep(for: .milliseconds(200))
            }
            return gets.sorted()[gets.count / 2]
        }
        // The floor, in this run: with four busy loops beside it a get
        // alone takes about 5 ms on two cores.
        let alone = try await medianGet()
        let flood = try Subprocess(TestNetwork.asUser(Self.nobody) + ["/usr/bin/python3", "-c", """
            import socket, sys, threading
            def pipeline():
                s = socket.socket(socket.AF_UNIX)
                s.connect(sys.argv[1])
                s.sendall(b'{"op":"check"}\\n' * 10000)
                threading.Event().wait()
            for _ in range(8):
                threading.Thread(target=pipeline, daemon=True).start()
            print("pipelining", flush=True)
            threading.Event().wait()
            """, network.socketPath])
        defer { flood.signal(SIGKILL) }
        _ = try await eventually("the checks are pipelined") { flood.outputLines.first }
        // The eight connected (a get's may linger beside them) before the
        // daemon is measured.
        _ = try await eventually("the pipelines connected") {
            try await network.connections(to: network.socketPath, fromTheTest: true) >= 8 ? true : nil
        }
        let ticks = MetricsScrapeTests.cpuTicks(daemon.pid)
        let sampled = ContinuousClock.now
        let flooded = try await medianGet()
        let elapsed = (ContinuousClock.now - sampled).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let busy = Double(MetricsScrapeTests.cpuTicks(daemon.pid) - ticks) / Double(sysconf(Int32(_SC_CLK_TCK))) / seconds
        #expect(busy < 0.1, "the daemon used \(Int(busy * 100))% of a core")
        #expect(flooded - alone < .milliseconds(5), "another client's get: \(flooded) flooded, \(alone) alone")
        #expect(daemon.isRunning)
    }
}
