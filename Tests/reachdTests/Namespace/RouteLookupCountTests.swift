import Foundation
import Logging
import Testing
import TestSupport
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// What a route change costs is the lookups it makes, counted, not timed: a
/// route decides a lookup only for the addresses its prefix holds, so a
/// change elsewhere in the table (a container's veth, a BGP feed) asks the
/// kernel nothing for the families or the name servers, and one under a
/// name server asks for that server alone.
@Suite("Lookups a route change asks", .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct RouteLookupCountTests {
    /// After each `ip` command: the lookups it cost, and whether a status was published.
    struct Step: Sendable, Equatable, CustomStringConvertible {
        var lookups: Int
        var published: Bool
        /// The rtnetlink message types the step's batches held: not compared,
        /// said where a count is wrong (24 and 25 are routes, 16 a link, 20
        /// an address).
        var messages: [UInt16] = []

        static func == (a: Step, b: Step) -> Bool { a.lookups == b.lookups && a.published == b.published }
        var description: String { "\(lookups) lookups, published \(published), messages \(messages)" }
    }

    /// Each message's type in a datagram (`nlmsghdr`: length, then type).
    final class MessageTypes {
        var read: [UInt16] = []
        func take(_ datagram: [UInt8]) {
            var offset = 0
            while offset + 16 <= datagram.count {
                let length = Int(datagram[offset]) | Int(datagram[offset + 1]) << 8 | Int(datagram[offset + 2]) << 16
                read.append(UInt16(datagram[offset + 4]) | UInt16(datagram[offset + 5]) << 8)
                guard length >= 16 else { break }
                offset += (length + 3) & ~3
            }
        }
    }

    @Test func aRouteChangeAsksOnlyTheLookupsItsPrefixHolds() async throws {
        let network = try await TestNetwork()
        // No link-local address: its duplicate address detection ends a
        // second or two after the link comes up, news of an address that
        // would land in some step's batch (an address: every lookup).
        try await network.inHost(
            "link set vh addrgenmode none", "link set vh up", "addr add 10.77.0.2/24 dev vh",
            "-6 addr add fd77::2/64 dev vh nodad")
        let commands = [
            "route add 10.99.0.0/16 via 10.77.0.1",  // elsewhere: nothing
            "route add 192.0.2.0/24 via 10.77.0.1",  // the IPv4 name server's
            "route add default via 10.77.0.1",  // the IPv4 probe's, and that server's
            "-6 route add fd99::/64 via fd77::1",  // the IPv6 name server's
            "-6 route add 2001:db8:1::/48 via fd77::1",  // elsewhere
            "addr add 10.77.0.3/24 dev vh",  // an address: every one
        ]
        let steps = try await network.onThreadInHost { () throws -> [Step] in
            let watcher = try NetworkWatcher(source: .inProcess, logger: Logger(label: "test"))
            _ = try watcher.setResolverServers([Reachability.NameServer(IPAddress("192.0.2.53")!), Reachability.NameServer(IPAddress("fd99::53")!)])
            let types = MessageTypes()
            watcher.traceDatagrams { types.take($0) }
            _ = try watcher.start()
            // What the kernel says late of the set-up is read first (the
            // link's operstate comes from linkwatch up to a second after the
            // link came up): a loaded CI run counted every lookup at step 2,
            // as for news of a link or an address in its batch. Settled at
            // 1.5 s of silence.
            var descriptor = pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)
            while poll(&descriptor, 1, 1500) > 0 { _ = try watcher.handleReadable() }
            return try commands.map { command throws -> Step in
                let before = watcher.routeLookupsAsked
                types.read = []
                // Started from this thread, in this network; the kernel has
                // queued its notifications by the time `ip` exits.
                let status = Subprocess.runBlocking(["/usr/bin/env", "ip"] + command.split(separator: " ").map(String.init))
                guard status == 0 else { throw HarnessError.commandFailed("ip \(command): \(status)") }
                var published = false
                while poll(&descriptor, 1, 0) > 0 {
                    if try watcher.handleReadable() != nil { published = true }
                }
                return Step(lookups: watcher.routeLookupsAsked - before, published: published, messages: types.read)
            }
        }
        let expected = [
            Step(lookups: 0, published: false),
            Step(lookups: 1, published: true),  // the server is routed now
            Step(lookups: 2, published: true),  // online
            Step(lookups: 1, published: true),
            Step(lookups: 0, published: false),
            Step(lookups: 4, published: true),  // the interface's addresses
        ]
        for (index, (step, wanted)) in zip(steps, expected).enumerated() {
            #expect(step == wanted, "ip \(commands[index])")
        }
        #expect(steps.count == expected.count)
    }

    /// The kernel tells of an IPv4 route's removal before it unlinks the
    /// route (1 to 2 removals in 1,000 were answered by the route going
    /// away, bench/removal.py): where the removed route may have given an
    /// answer (its link and gateway, under its prefix), everything is asked
    /// again, once, shortly after, whatever batches come meanwhile, mixed
    /// ones included. An addition, an IPv6 removal (the kernel unlinks those
    /// first) or a removal no answer can have come from sets no time.
    @Test func aRemovalThatMayHaveGivenAnAnswerIsAskedAgainOnce() async throws {
        let network = try await TestNetwork()
        try await network.inHost(
            "link set vh addrgenmode none", "link set vh up", "addr add 10.77.0.2/24 dev vh",
            "-6 addr add fd77::2/64 dev vh nodad", "route add default via 10.77.0.1", "-6 route add default via fd77::1")
        let mixed = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-mixed-\(getpid()).batch")
        try "addr add 10.77.0.3/24 dev vh\nroute add 192.0.2.0/25 via 10.77.0.1\nroute del 192.0.2.0/25 via 10.77.0.1\n"
            .write(to: mixed, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: mixed) }
        // Each command, and what it leaves of the time to ask again.
        enum Due { case none, set, stands, setAndAsked }
        let steps: [(command: String, due: Due)] = [
            ("route add 192.0.2.0/24 via 10.77.0.1", .none),  // the server's answer: the same gateway
            ("route del 192.0.2.0/24 via 10.77.0.1", .set),  // the same answer, by the default route
            ("route add 192.0.2.0/26 via 10.77.0.1", .stands),  // asks the server again; the time stands
            ("route del 192.0.2.0/26 via 10.77.0.1", .setAndAsked),
            ("-6 route add fd99::/64 via fd77::1", .none),
            ("-6 route del fd99::/64 via fd77::1", .none),  // the same answer, but IPv6
            ("-batch \(mixed.path)", .setAndAsked),  // an address, and a route added and removed, in one batch
            ("route del default", .none),  // every IPv4 answer moves
        ]
        let results = try await network.onThreadInHost { () throws -> [Bool] in
            let watcher = try NetworkWatcher(source: .inProcess, logger: Logger(label: "test"))
            _ = try watcher.setResolverServers([
                Reachability.NameServer(IPAddress("192.0.2.53")!), Reachability.NameServer(IPAddress("fd99::53")!),
            ])
            _ = try watcher.start()
            var descriptor = pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)
            while poll(&descriptor, 1, 1500) > 0 { _ = try watcher.handleReadable() }
            var set: ContinuousClock.Instant?
            // At the time set, everything is asked again, and nothing more is due.
            func askAt(_ due: ContinuousClock.Instant) throws {
                let asked = watcher.routeLookupsAsked
                _ = try watcher.expireRoutes(now: due)
                #expect(watcher.routeLookupsAsked - asked == 4, "the probes and the servers")
                #expect(watcher.routesExpire == nil)
            }
            return try steps.map { step throws -> Bool in
                let status = Subprocess.runBlocking(["/usr/bin/env", "ip"] + step.command.split(separator: " ").map(String.init))
                guard status == 0 else { throw HarnessError.commandFailed("ip \(step.command): \(status)") }
                let before = watcher.routeLookupsAsked
                while poll(&descriptor, 1, 0) > 0 { _ = try watcher.handleReadable() }
                guard let due = watcher.routesExpire else { return step.due == .none }
                #expect(due <= ContinuousClock.now + RemovalRecheck.settles)
                switch step.due {
                case .none: return false
                case .set: set = due
                case .stands:
                    #expect(watcher.routeLookupsAsked > before, "this batch asked")
                    #expect(due == set, "the time set stands through a later batch")
                    try askAt(due)
                case .setAndAsked: try askAt(due)
                }
                return true
            }
        }
        #expect(results.allSatisfy { $0 }, "\(zip(steps.map(\.command), results).map { "\($0): \($1)" })")
        #expect(results.count == steps.count)
    }

    /// Notifications lost (an overrun, a reopened socket) may have held an
    /// IPv4 route's removal: the lookups are asked again shortly after the
    /// fresh dump's, and so are the watched destinations'.
    @Test func aLossOfNotificationsIsAskedAgainShortlyAfterToo() async throws {
        let network = try await TestNetwork()
        try await network.inHost("link set vh up", "addr add 10.77.0.2/24 dev vh", "route add default via 10.77.0.1")
        let (due, removed) = try await network.onThreadInHost { () throws -> (ContinuousClock.Instant?, Set<RemovedRoute>) in
            let watcher = try NetworkWatcher(source: .inProcess, logger: Logger(label: "test"))
            _ = try watcher.start()
            #expect(watcher.routesExpire == nil, "a first dump sets no time")
            _ = try watcher.reopen()
            return (watcher.routesExpire, watcher.removedForDestinations)
        }
        let set = try #require(due, "the time to ask again")
        #expect(set <= ContinuousClock.now + RemovalRecheck.settles)
        #expect(removed == [NetworkWatcher.anyIPv4Route])
    }
}
