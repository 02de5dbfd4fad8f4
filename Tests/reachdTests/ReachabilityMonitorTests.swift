import Foundation
import Testing
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// ReachabilityMonitor in network namespaces, through `reachd monitor --json`,
/// which is a ReachabilityMonitor(.automatic) printing every status it delivers.
@Suite("ReachabilityMonitor in network namespaces", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct ReachabilityMonitorTests {
    @Test func withoutADaemonItFollowsNetlinkInProcess() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let monitor = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        let first = try await eventually("a first status") { monitor.statuses.first }
        #expect(first.source == .embedded)
        #expect(monitor.errorOutput.contains("following netlink in-process"))
        try await network.inHost("route add default via 10.77.0.1")
        let online = try await eventually("the change, in-process") { monitor.statuses.last { $0.online } }
        #expect(online.source == .embedded)
    }

    @Test func aDaemonRestartIsFollowedAndAChangeMadeMeanwhileIsDelivered() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        var daemon = try await network.startDaemon()
        let monitor = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        let before = try await eventually("the daemon's first status") { monitor.statuses.first { $0.source == .daemon } }

        daemon.signal(SIGTERM)
        try await daemon.wait()
        // While the daemon is away the monitor does not go blind: it follows netlink itself.
        try await network.inHost("route add default via 10.77.0.1")
        let meanwhile = try await eventually("the change while the daemon is away") {
            monitor.statuses.last { $0.source == .embedded && $0.online }
        }
        #expect(meanwhile.primary?.interface == "vh")

        daemon = try await network.startDaemon()
        let back = try await eventually("the daemon again, with the current state", timeout: .seconds(15)) {
            monitor.statuses.last { $0.source == .daemon && $0.online }
        }
        #expect(back.seq > before.seq, "a new daemon, resubscribed, and seq did not go backwards")
        #expect(monitor.errorOutput.contains("following the daemon again"))
        _ = daemon
    }

    @Test func aDaemonThatStartsLaterTakesOver() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let monitor = try network.startReachd(defaultSocket: network.socketPath, "monitor", "--json")
        _ = try await eventually("in-process first") { monitor.statuses.first { $0.source == .embedded } }
        let daemon = try await network.startDaemon()
        let fromDaemon = try await eventually("the daemon once it answers", timeout: .seconds(15)) {
            monitor.statuses.last { $0.source == .daemon }
        }
        #expect(fromDaemon.online)
        _ = daemon
    }
}

@Suite("ReachabilityMonitor in this process")
struct ReachabilityMonitorLocalTests {
    @Test func aDaemonOnlyMonitorReportsAVersionMismatchAsAnError() async throws {
        let daemon = try FakeDaemon()
        let monitor = ReachabilityMonitor(source: .daemon, socketPath: daemon.path)
        await #expect(throws: DaemonClientError.self) {
            for try await _ in monitor.statuses() {}
        }
        let description = String(describing: monitor.lastError.map { "\($0)" } ?? "")
        #expect(description.contains("protocol version 2"))
        monitor.cancel()
    }

    @Test func theCommandKeepsWarningsOffStdout() async throws {
        // An automatic monitor warns of the mismatch and carries on in-process;
        // the warning goes to stderr, so stdout stays pure JSON lines.
        let daemon = try FakeDaemon()
        let monitor = try Subprocess(
            ["/usr/bin/env", "\(SocketPath.environmentVariable)=\(daemon.path)", Reachd.binary, "monitor", "--json"])
        _ = try await eventually("a status from the in-process monitor") { monitor.outputLines.first }
        _ = try await eventually("the warning") { monitor.errorOutput.contains("protocol version 2") ? true : nil }
        for line in monitor.outputLines {
            guard case .status = try DaemonMessage.decode(Array(line.utf8)) else {
                Issue.record("not a status line on stdout: \(line)")
                continue
            }
        }
        monitor.signal(SIGTERM)
    }

    @Test(.timeLimit(.minutes(1)))  // a broken cancel would otherwise hang, not fail
    func cancellingEndsEverySequence() async throws {
        let monitor = ReachabilityMonitor(source: .daemon, socketPath: "/nonexistent/reachd.sock")
        let statuses = monitor.statuses()
        monitor.cancel()
        var count = 0
        for try await _ in statuses { count += 1 }
        #expect(count == 0)
        #expect(monitor.currentStatus == nil)
    }

    /// The monitor, and EmbeddedMonitor.statuses (the same loop, in-process
    /// only). One after the other: each counts the sockets the other opens.
    @Test(.serialized, arguments: [false, true])
    func cancellingClosesItsNetlinkSockets(throughEmbeddedMonitor: Bool) async throws {
        /// Netlink sockets this process holds, by inode: descriptors whose socket
        /// inode is listed in /proc/self/net/netlink. By inode, not descriptor
        /// number: the C library opens and closes netlink sockets of its own
        /// (getaddrinfo, getifaddrs) in tests running beside this one, and a
        /// number they free may be the monitor's next.
        func netlinkSockets() -> Set<String> {
            let table = readProcFile("/proc/self/net/netlink")
            let inodes = Set(table.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").last.map(String.init) })
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return Set(descriptors.compactMap { fd -> String? in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                let inode = String(target.dropFirst(8).dropLast())
                return inodes.contains(inode) ? inode : nil
            })
        }
        let before = netlinkSockets()
        let monitor = throughEmbeddedMonitor ? nil : ReachabilityMonitor(source: .embedded)
        var statuses = (monitor?.statuses() ?? EmbeddedMonitor.statuses()).makeAsyncIterator()
        let first = try await statuses.next()
        #expect(first?.source == .embedded)
        let opened = netlinkSockets().subtracting(before)
        #expect(opened.count >= 2, "the event socket and the query socket: before \(before.sorted()), after \(netlinkSockets().sorted())")
        // Ending the iteration ends EmbeddedMonitor's thread; cancel() the monitor's.
        statuses = AsyncThrowingStream<NetworkStatus, any Error> { $0.finish() }.makeAsyncIterator()
        monitor?.cancel()
        _ = try await eventually("both netlink sockets closed", timeout: .seconds(5)) {
            netlinkSockets().isDisjoint(with: opened) ? true : nil
        }
    }

    @Test func theBackoffDoublesUpToItsCap() {
        let backoff = ReachabilityMonitor.Backoff(initial: .milliseconds(100), maximum: .seconds(1))
        #expect((0...5).map(backoff.delay(attempt:))
                == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
    }
}

/// A monitor fed by a fake daemon: statuses without netlink sockets, which
/// another test in this process counts.
@Suite("ReachabilityMonitor delivery")
struct ReachabilityMonitorDeliveryTests {
    @Test func firstStatusWaitsForTheFirstAnswer() async throws {
        let daemon = try FakeDaemon(answering: StatusCommandTests.newerDaemonsLine)
        let monitor = ReachabilityMonitor(source: .daemon, socketPath: daemon.path)
        let status = try await monitor.firstStatus()
        #expect(status.seq == 7 && status.source == .daemon)
        #expect(monitor.currentStatus == status)
    }

    @Test func firstStatusThrowsWhenTheMonitorIsCancelledFirst() async throws {
        let monitor = ReachabilityMonitor(source: .daemon, socketPath: "/nonexistent/reachd.sock")
        monitor.cancel()
        await #expect(throws: CancellationError.self) { try await monitor.firstStatus() }
    }

    @Test func onChangeCanDeliverOnTheMainActor() async throws {
        let daemon = try FakeDaemon(answering: StatusCommandTests.newerDaemonsLine)
        let monitor = ReachabilityMonitor(source: .daemon, socketPath: daemon.path)
        let (delivered, report) = AsyncStream.makeStream(of: NetworkStatus.self)
        let subscription = monitor.onChange(onMainActor: { status in
            // Traps if not: the compiler checks the handler's type, this the call.
            MainActor.assertIsolated("the handler runs on the main actor")
            report.yield(status)
        })
        defer { subscription.cancel() }
        var reports = delivered.makeAsyncIterator()
        #expect(await reports.next()?.seq == 7)
    }
}

/// The controller fed by a daemon behind a portal: the status's portal URL
/// reaches the state shown.
@Suite("A placeholder controller following a daemon behind a portal")
struct PlaceholderPortalDeliveryTests {
    static let portalLine = StatusCommandTests.newerDaemonsLine
        .replacingOccurrences(of: #""connectivity":"unknown""#, with: #""connectivity":"portal","portal_url":"http://portal.example/login""#)

    @Test func thePortalURLReachesTheState() async throws {
        #expect(Self.portalLine.contains("portal_url"))
        let daemon = try FakeDaemon(answering: Self.portalLine)
        let controller = PlaceholderController()
        controller.follow(ReachabilityMonitor(source: .daemon, socketPath: daemon.path))
        var events = controller.events.makeAsyncIterator()
        #expect(await events.next() == .willAppear(PlaceholderState(kind: .signInRequired, portalURL: "http://portal.example/login")))
    }
}
