import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// Clients as quiet as the daemon: waiting on a network that doesn't change,
/// `reachd monitor`, `wait-online` and a program on the callback API make no
/// system calls at all (libdispatch's once-a-second timer included), and
/// callbacks arrive straight from the monitor's thread, in order.
@Suite(
    "Quiet clients", .serialized,
    .enabled(if: NamespaceSupport.available, NamespaceSupport.reason),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (make test installs it)"))
struct QuietClientTests {
    static let banner = URL(fileURLWithPath: Reachd.binary).deletingLastPathComponent().appendingPathComponent("OnlineBanner").path

    /// Tests beside these make /etc/netns/HOST (`ip netns exec` mounts its
    /// files over /etc's), and /etc/netns with it where it is missing: a new
    /// entry in /etc, which every client here watches for the resolver's
    /// files, woke the in-process monitor in a make test run (a read and
    /// its EAGAIN). Made first, /etc/netns is never new while one is measured.
    init() throws {
        try FileManager.default.createDirectory(atPath: "/etc/netns", withIntermediateDirectories: true)
    }

    /// Every system call of every thread of `pid` over `seconds` quiet seconds
    /// (`everyThread` false: of its main thread only). Throws when strace
    /// could not attach: its silence then says nothing of `pid`'s.
    static func systemCalls(of pid: Int32, everyThread: Bool = true, seconds: Int = 2) async throws -> [String] {
        let trace = try await Subprocess.run(
            ["/usr/bin/timeout", "-s", "INT", "\(seconds)", "/usr/bin/strace", "-c"] + (everyThread ? ["-f"] : [])
                + ["-p", "\(pid)"],
            timeout: .seconds(seconds + 8))
        guard trace.error.contains("Process \(pid) attached") else {
            throw HarnessError.commandFailed("strace could not watch \(pid): \(trace.error)")
        }
        return trace.error.split(separator: "\n").map(String.init).filter { line in
            !line.contains("strace: ") && !line.hasPrefix("%") && !line.hasPrefix("-") && !line.contains("total")
        }
    }

    /// Waits until a tracer (the strace of ``systemCalls(of:everyThread:seconds:)``,
    /// started beside) holds every thread of `pid`: what it counts starts there.
    static func traced(_ pid: Int32) async throws {
        _ = try await eventually("strace attached to \(pid)", every: .milliseconds(10)) { () -> Bool? in
            guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !tasks.isEmpty else {
                return nil
            }
            let tracers = tasks.map { task in
                readProcFile("/proc/\(pid)/task/\(task)/status").split(separator: "\n")
                    .first { $0.hasPrefix("TracerPid:") }?.split(separator: "\t").last ?? "0"
            }
            return tracers.allSatisfy { $0 != "0" } ? true : nil
        }
    }

    /// Waits until every thread of `pid` has sat in the same system call,
    /// with the same arguments, for `quiet` (/proc/PID/task/*/syscall): a
    /// process done starting, or done with a change, and waiting. A fixed
    /// 300 ms was too short for `wait-online` starting under CI's load: its
    /// start (sockets, netlink, the daemon's first answer) was counted as
    /// its wait. A timer that wakes the process still shows in the trace
    /// that follows.
    static func settled(_ pid: Int32, quiet: Duration = .milliseconds(500), timeout: Duration = .seconds(15)) async throws {
        func calls() -> [String]? {
            guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
            let each = tasks.sorted().map { (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/syscall", encoding: .utf8)) ?? "running" }
            return each.contains { $0.hasPrefix("running") } ? nil : each
        }
        var last: [String]?
        var since = ContinuousClock.now
        _ = try await eventually("process \(pid) sitting waiting for \(quiet)", timeout: timeout, every: .milliseconds(20)) { () -> Bool? in
            let now = calls()
            if now == nil || now != last {
                last = now
                since = ContinuousClock.now
                return nil
            }
            return ContinuousClock.now - since >= quiet ? true : nil
        }
    }

    /// Route changes made while a client follows the daemon, for the
    /// tests of its news standing for its liveness probe.
    static let newsChanges = 10

    /// Makes ``newsChanges`` changes the daemon publishes, farther apart than
    /// the probes' spacing (500 ms), so that each could have had one, with
    /// `seen(n)` awaiting the client's n-th; the connections the daemon
    /// accepted meanwhile, and its calls. Traced, the daemon is slower than
    /// its client, as a daemon is on an idle multi-core host, so its news
    /// comes after the client heard the kernel. A change heard after its
    /// news was already queued is asked about, as before (the news may be
    /// older than the change): under make test's load, up to half were.
    static func connectionsAccepted(
        by daemon: Subprocess, in network: TestNetwork, seen: (Int) async throws -> Void
    ) async throws -> (accepted: Int, calls: [String]) {
        async let traced = systemCalls(of: daemon.pid, seconds: 2 + newsChanges)
        try await Self.traced(daemon.pid)
        for change in 0..<newsChanges {
            try await network.inHost(change.isMultiple(of: 2) ? "route del default" : "route add default via 10.77.0.1")
            try await seen(change + 1)
            try await Task.sleep(for: .milliseconds(700))
        }
        let calls = try await traced
        #expect(calls.contains { $0.hasSuffix(" sendto") }, "strace saw the changes published: \(calls)")
        // strace -c's columns: % time, seconds, usecs/call, calls, errors
        // (here EAGAIN: nothing more to accept), and the call.
        var accepted = 0
        for row in calls.map({ $0.split(separator: " ").map(String.init) }) where row.last == "accept" || row.last == "accept4" {
            let made = Int(row[3]) ?? 0
            let failed = row.count == 6 ? Int(row[4]) ?? 0 : 0
            accepted += made - failed
        }
        return (accepted, calls)
    }

    @Test(arguments: [
        ["monitor", "--no-daemon"], ["monitor", "--json"], ["wait-online", "-6", "-t", "0"],
        ["reach", "--watch", "10.77.0.1:443", "192.0.2.1:80"], ["reach", "--watch", "--no-daemon", "10.77.0.1:443"],
    ])
    func aWaitingClientMakesNoSystemCalls(_ command: [String]) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let client = try network.startReachd(defaultSocket: network.socketPath, command)
        defer { client.signal(SIGKILL) }
        if command[0] != "wait-online" { _ = try await eventually("the first answer") { client.outputLines.first } }
        try await Self.settled(client.pid)
        #expect(client.isRunning, "\(client.errorOutput)")
        let calls = try await Self.systemCalls(of: client.pid)
        #expect(calls.isEmpty, "\(command) made system calls while the network was quiet:\n\(calls.joined(separator: "\n"))")
        withExtendedLifetime(daemon) {}
    }

    /// Where the resolver is not systemd-resolved, an in-process client
    /// does not wait for resolved's directory, so what systemd makes in
    /// /run/systemd wakes it not (`systemd-analyze verify`, run by the
    /// unit's tests beside this suite, makes `systemd-units-load` there).
    /// Before, it watched /run/systemd for `resolve` to appear, and each
    /// entry made there woke it: a CI run failed on it.
    @Test func entriesMadeInRunSystemdWakeNoClientWhoseResolverIsNotResolved() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: "10.77.0.1")
        let runSystemd = try network.folder("run-systemd")
        let client = try Subprocess(
            network.inHost(etc: etc, runSystemd: runSystemd) + [Reachd.binary, "monitor", "--json", "--no-daemon"])
        defer { client.signal(SIGKILL) }
        _ = try await eventually("the first answer") { client.outputLines.first }
        try await Self.settled(client.pid)
        async let traced = Self.systemCalls(of: client.pid)
        try await Self.traced(client.pid)
        // A file, as systemd-analyze makes it, and directories, as systemd does.
        try "".write(to: runSystemd.appendingPathComponent("systemd-units-load"), atomically: false, encoding: .utf8)
        for name in ["transient", "journal"] {
            try FileManager.default.createDirectory(at: runSystemd.appendingPathComponent(name), withIntermediateDirectories: false)
        }
        let calls = try await traced
        #expect(calls.isEmpty, "entries made in /run/systemd woke the client:\n\(calls.joined(separator: "\n"))")
        #expect(client.isRunning, "\(client.errorOutput)")
    }

    /// With no daemon, a client following in-process waits for one on a
    /// watch of where its socket would appear: no system calls over longer
    /// than the 5 s its retries were capped at (it asked every 5 s for as
    /// long as it ran), and a daemon started later is followed.
    @Test func aClientWaitingForADaemonThatIsNotThereMakesNoSystemCallsAndFollowsItOnceStarted() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let client = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        defer { client.signal(SIGKILL) }
        _ = try await eventually("the in-process status") { client.outputLines.first }
        try await Self.settled(client.pid)
        let calls = try await Self.systemCalls(of: client.pid, seconds: 6)
        #expect(calls.isEmpty, "a client waiting for a daemon that is not there woke:\n\(calls.joined(separator: "\n"))")
        let daemon = try await network.startDaemon()
        _ = try await eventually("the daemon, followed", timeout: .seconds(10)) {
            client.outputLines.contains { $0.contains(#""source":"daemon""#) } ? true : nil
        }
        withExtendedLifetime(daemon) {}
    }

    /// A client whose daemon publishes each change the kernel reports asks
    /// the daemon nothing more: the news is its proof of life. Before, each
    /// change cost the daemon a connection and an answer (`get`) per
    /// following client, as it published that change to them.
    @Test func aFollowingClientAsksTheDaemonNothingWhileItsNewsFlows() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let client = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        defer { client.signal(SIGKILL) }
        _ = try await eventually("the first answer") { client.outputLines.first }
        try await Self.settled(client.pid)
        let printed = client.outputLines.count
        let changes = Self.newsChanges
        let (accepted, calls) = try await Self.connectionsAccepted(by: daemon, in: network) { change in
            _ = try await eventually("change \(change) printed") { client.outputLines.count >= printed + change ? true : nil }
        }
        #expect(client.outputLines.count == printed + changes, "each change printed once: \(client.outputLines.suffix(changes + 1))")
        // Asked at every change, it was every one.
        #expect(accepted <= changes / 2, "the client connected to the daemon again, \(accepted) times of \(changes): \(calls)")
        withExtendedLifetime(daemon) {}
    }

    /// Having noticed a stopped daemon, a monitor follows netlink and waits
    /// for the daemon on the connection it asked on: no retries, no timers.
    @Test func aMonitorWaitingForAStoppedDaemonMakesNoSystemCalls() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        let client = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        defer { client.signal(SIGKILL) }
        _ = try await eventually("the first status") { client.outputLines.first }
        daemon.signal(SIGSTOP)
        try await network.inHost("route del default")
        _ = try await eventually("following netlink", timeout: .seconds(5)) {
            client.errorOutput.contains("following the network in-process meanwhile") ? true : nil
        }
        try await Self.settled(client.pid)
        let calls = try await Self.systemCalls(of: client.pid)
        #expect(calls.isEmpty, "a monitor waiting for a stopped daemon woke:\n\(calls.joined(separator: "\n"))")
    }

    @Test func aCallbackProgramFollowsChangesAndSleepsBetweenThem() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let banner = try Subprocess(
            ["/usr/bin/env", "\(SocketPath.environmentVariable)=\(network.socketPath)", "ip", "netns", "exec", network.host, Self.banner])
        defer { banner.signal(SIGKILL) }
        _ = try await eventually("the current status") { banner.outputLines.first }
        #expect(banner.outputLines.first == "online via vh from the daemon")
        let calls = try await Self.systemCalls(of: banner.pid)
        #expect(calls.isEmpty, "the callback API woke while the network was quiet:\n\(calls.joined(separator: "\n"))")
        try await network.inHost("route del default")
        _ = try await eventually("the change") { banner.outputLines.count > 1 ? true : nil }
        #expect(banner.outputLines.dropFirst().first == "offline (local) from the daemon", "\(banner.outputLines)")
        withExtendedLifetime(daemon) {}
    }

    @Test func handlersSeeEveryChangeInOrderAndMayRegisterOthers() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        // Made in the daemon's network, as a program running there would.
        let socket = network.socketPath
        let monitor = try await network.onThreadInHost { ReachabilityMonitor(source: .daemon, socketPath: socket) }
        defer { monitor.cancel() }
        let seen = Mutex<[Bool]>([]), inner = Mutex<[Bool]>([])
        let nested = Mutex<ReachabilityMonitor.Subscription?>(nil)
        let subscription = monitor.onChange { status in
            seen.withLock { $0.append(status.online) }
            // Registering from inside a handler must not deadlock; the new one
            // gets the current status at once.
            if nested.withLock({ $0 == nil }) {
                let added = monitor.onChange { current in inner.withLock { $0.append(current.online) } }
                nested.withLock { $0 = added }
            }
        }
        _ = try await eventually("the current status") { seen.withLock { $0.first } }
        for command in ["route del default", "route add default via 10.77.0.1", "route del default"] {
            let count = seen.withLock { $0.count }
            try await network.inHost(command)
            do {
                _ = try await eventually("the change") { seen.withLock { $0.count > count ? true : nil } }
            } catch {
                // Seen once under the full parallel suite, never alone: say what the monitor knew.
                Issue.record("after \(command): lastError \(String(describing: monitor.lastError)), current \(String(describing: monitor.currentStatus))")
                throw error
            }
        }
        #expect(seen.withLock { $0 } == [true, false, true, false])
        #expect(inner.withLock { $0 } == [true, false, true, false], "the nested handler: the current status, then each change")
        subscription.cancel()
        nested.withLock { $0?.cancel() }
        try await network.inHost("route add default via 10.77.0.1")
        #expect(try await holdsThroughout(.milliseconds(300)) { seen.withLock { $0.count } == 4 }, "no calls after cancel")
        withExtendedLifetime(daemon) {}
    }
}
