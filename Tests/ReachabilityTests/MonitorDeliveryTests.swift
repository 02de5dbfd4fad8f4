import Foundation
import Testing
import TestSupport
@testable import Reachability
@testable import ReachabilityPlaceholders

extension SessionsInThisProcess {
    @Suite("ReachabilityMonitor in this process")
    struct ReachabilityMonitorLocalTests {
        @Test func aDaemonOnlyMonitorReportsAVersionMismatchAsAnError() async throws {
            let daemon = try FakeDaemon()
            let monitor = ReachabilityMonitor(source: .daemon, socketPath: daemon.path)
            await #expect(throws: ReachabilityError.self) {
                for try await _ in monitor.statuses() {}
            }
            let description = String(describing: monitor.lastError.map { "\($0)" } ?? "")
            #expect(description.contains("protocol version 2"))
            monitor.cancel()
        }

        /// Statuses read together are each delivered: the newest alone
        /// would hide a handover that an older one in the same read says.
        @Test(.timeLimit(.minutes(1)))
        func aHandoverReadWithALaterStatusIsStillDelivered() async throws {
            guard case .status(var first) = try DaemonMessage.decode(Array(FakeDaemon.newerDaemonsLine.utf8)) else {
                Issue.record("not a status")
                return
            }
            first.changes = []
            var moved = first
            moved.seq += 1
            moved.ipv4.path?.gateway = "192.0.2.254"
            moved.changes = [.path(.ipv4, from: first.ipv4.path, to: moved.ipv4.path)]
            var linked = moved
            linked.seq += 1
            linked.interfaces = [InterfaceStatus(name: "veth0", index: 9, up: true, carrier: true, operstate: "up", loopback: false, addresses: [])]
            linked.changes = [.interfaces(links: ["veth0"])]
            let lines = [first, moved, linked].map { String(decoding: DaemonMessage.status($0).line().dropLast(), as: UTF8.self) }
            // The first connection gets the first status (the monitor's
            // start), the next all three in one write (after the monitor's
            // backoff: the sequence below is listening), later ones the last.
            let daemon = try FakeDaemon(answeringInTurn: [lines[0], lines.joined(separator: "\n"), lines[2]])
            let monitor = ReachabilityMonitor(source: .daemon, socketPath: daemon.path, detail: .full)
            defer { monitor.cancel() }
            var changes = monitor.pathChanges().makeAsyncIterator()
            let change = try await changes.next()
            #expect(change?.from?.gateway == "192.0.2.1" && change?.to?.gateway == "192.0.2.254")
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

        /// A monitor following the status, and one following a destination too
        /// (the same engine holds both). One after the other: each counts the
        /// sockets the other opens.
        @Test(.serialized, arguments: [false, true])
        func cancellingClosesItsNetlinkSockets(followingADestination: Bool) async throws {
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
            let monitor = ReachabilityMonitor(source: .inProcess)
            var statuses = monitor.statuses().makeAsyncIterator()
            let first = try await statuses.next()
            #expect(first?.source == .inProcess)
            if followingADestination {
                var answers = monitor.reachability(of: try Destination(parsing: "127.0.0.1:443")).makeAsyncIterator()
                #expect(try await answers.next()?.source == .inProcess)
            }
            let opened = netlinkSockets().subtracting(before)
            #expect(opened.count >= 2, "the event socket and the query socket: before \(before.sorted()), after \(netlinkSockets().sorted())")
            monitor.cancel()
            _ = try await eventually("both netlink sockets closed", timeout: .seconds(5)) {
                netlinkSockets().isDisjoint(with: opened) ? true : nil
            }
        }

        @Test func theBackoffDoublesUpToItsCap() {
            let backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(1))
            #expect((0...5).map(backoff.delay(attempt:))
                    == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
        }
    }

    /// A monitor fed by a fake daemon: statuses without netlink sockets, which
    /// another test in this process counts.
    @Suite("ReachabilityMonitor delivery")
    struct ReachabilityMonitorDeliveryTests {
        @Test func firstStatusWaitsForTheFirstAnswer() async throws {
            let daemon = try FakeDaemon(answering: FakeDaemon.newerDaemonsLine)
            let monitor = ReachabilityMonitor(source: .daemon, socketPath: daemon.path)
            let status = try await monitor.firstStatus()
            #expect(status.seq == 7 && status.source == .daemon)
            #expect(monitor.currentStatus == status)
        }

        /// The monitor asks the daemon for summaries (its default), and from a
        /// daemon that predates them, which answers in full, it and a one-shot
        /// answer still deliver summaries.
        @Test func summariesAreAskedForAndMadeFromAnOldDaemonsStatuses() async throws {
            let daemon = try FakeDaemon(answering: FakeDaemon.newerDaemonsLine)
            let monitor = ReachabilityMonitor(source: .daemon, socketPath: daemon.path)
            let status = try await monitor.firstStatus()
            #expect(status.isSummary && status.seq == 7)
            #expect(daemon.requests.first == #"{"op":"subscribe","detail":"summary"}"#, "\(daemon.requests)")
            let once = try await ReachabilityMonitor.currentStatus(source: .daemon, socketPath: daemon.path, detail: .summary)
            #expect(once.isSummary && once.seq == 7, "an old daemon's full answer, made a summary")
            // The monitor reconnects meanwhile (the fake hangs up): its requests come and go.
            #expect(daemon.requests.contains(#"{"op":"get","detail":"summary"}"#), "\(daemon.requests)")
        }

        @Test func firstStatusThrowsWhenTheMonitorIsCancelledFirst() async throws {
            let monitor = ReachabilityMonitor(source: .daemon, socketPath: "/nonexistent/reachd.sock")
            monitor.cancel()
            await #expect(throws: CancellationError.self) { try await monitor.firstStatus() }
        }

        @Test func onChangeCanDeliverOnTheMainActor() async throws {
            let daemon = try FakeDaemon(answering: FakeDaemon.newerDaemonsLine)
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

    /// The controller tells the daemon when a load fails on the network
    /// while the status says online: a `check` request, on a connection of
    /// its own. Not for a failure the network does not explain, nor while
    /// the status says offline.
    @Suite("A placeholder controller reporting failures")
    struct PlaceholderFailureReportTests {
        static let online = FakeDaemon.newerDaemonsLine
        static let offline = FakeDaemon.newerDaemonsLine
            .replacingOccurrences(
                of: #""ipv4":{"path":{"family":"ipv4","gateway":"192.0.2.1","index":2,"interface":"eth0"},"reachability":"online","reason":null}"#,
                with: #""ipv4":{"path":null,"reachability":"local","reason":"no_route"}"#)
            .replacingOccurrences(of: #""ipv4":"online""#, with: #""ipv4":"local""#)
            .replacingOccurrences(of: #""online":true"#, with: #""online":false"#)
            .replacingOccurrences(of: #""primary":{"family":"ipv4","gateway":"192.0.2.1","index":2,"interface":"eth0"}"#, with: #""primary":null"#)
            .replacingOccurrences(of: #""reachability":"online","seq":7"#, with: #""reachability":"local","seq":6"#)

        @Test func aNetworkFailureWhileOnlineAsksTheDaemonToCheck() async throws {
            #expect(Self.offline.contains(#""online":false"#) && Self.offline.contains(#""seq":6"#))
            let daemon = try ScriptedDaemon { _, request in request.contains("subscribe") ? [Self.offline] : [] }
            let controller = PlaceholderController()
            controller.follow(ReachabilityMonitor(source: .daemon, socketPath: daemon.path))
            let checks = { daemon.allRequests.filter { $0.contains(#""op":"check""#) }.count }
            _ = try await eventually("offline") { controller.network == .offline ? true : nil }
            controller.loadFailed(.initial, generation: 1, .unreachable(.timeout))
            daemon.send(Self.online)
            _ = try await eventually("online") { controller.network == .online ? true : nil }
            controller.loadFailed(.initial, generation: 2, .server(status: 503))
            controller.loadFailed(.initial, generation: 3, .decoding)
            #expect(try await holdsThroughout(.milliseconds(300)) { checks() == 0 },
                    "offline, or the server's own failure: nothing to check")
            controller.loadFailed(.refresh, generation: 4, .unreachable(.dns))
            _ = try await eventually("the report") { checks() > 0 ? true : nil }
            #expect(try await holdsThroughout(FailureReporter.spacing + .milliseconds(300)) { checks() == 1 },
                    "\(daemon.allRequests)")
        }
    }

    /// The controller fed by a daemon behind a portal: the status's portal URL
    /// reaches the state shown.
    @Suite("A placeholder controller following a daemon behind a portal")
    struct PlaceholderPortalDeliveryTests {
        static let portalLine = FakeDaemon.newerDaemonsLine
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
}
