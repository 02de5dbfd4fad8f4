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
    struct Step: Sendable, Equatable {
        var lookups: Int
        var published: Bool
    }

    @Test func aRouteChangeAsksOnlyTheLookupsItsPrefixHolds() async throws {
        let network = try await TestNetwork()
        try await network.inHost("link set vh up", "addr add 10.77.0.2/24 dev vh", "-6 addr add fd77::2/64 dev vh nodad")
        let commands = [
            "route add 10.99.0.0/16 via 10.77.0.1",  // elsewhere: nothing
            "route add 192.0.2.0/24 via 10.77.0.1",  // the IPv4 name server's
            "route add default via 10.77.0.1",  // the IPv4 probe's, and that server's
            "-6 route add fd99::/64 via fd77::1",  // the IPv6 name server's
            "-6 route add 2001:db8:1::/48 via fd77::1",  // elsewhere
            "addr add 10.77.0.3/24 dev vh",  // an address: every one
        ]
        let steps = try await network.onThreadInHost { () throws -> [Step] in
            let watcher = try NetworkWatcher(source: .embedded, logger: Logger(label: "test"))
            _ = try watcher.setResolverServers([Reachability.NameServer(IPAddress("192.0.2.53")!), Reachability.NameServer(IPAddress("fd99::53")!)])
            _ = try watcher.start()
            return try commands.map { command throws -> Step in
                let before = watcher.routeLookupsAsked
                // Started from this thread, in this network; the kernel has
                // queued its notifications by the time `ip` exits.
                let status = Subprocess.runBlocking(["/usr/bin/env", "ip"] + command.split(separator: " ").map(String.init))
                guard status == 0 else { throw HarnessError.commandFailed("ip \(command): \(status)") }
                var published = false
                var descriptor = pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)
                while poll(&descriptor, 1, 0) > 0 {
                    if try watcher.handleReadable() != nil { published = true }
                }
                return Step(lookups: watcher.routeLookupsAsked - before, published: published)
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
}
