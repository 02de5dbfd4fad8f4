import Foundation
import Testing
import TestSupport
@testable import Reachability

/// The daemon resolves names for every user on a few threads (issue 42):
/// one user asking for names whose server never answers must not make
/// another user's name wait, during the flood or after it. Before, the
/// queue was first come, first served, shared and uncapped, and a name
/// stayed queued after its request was gone: a user's `/etc/hosts` name was
/// answered `timeout` 36 s after the flood ended.
@Suite("Fair name resolution", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct FairResolverTests {
    static let flooder = packageRoot.appendingPathComponent("Tests/reachdTests/Harness/flood-reach.py").path

    /// One `reach` of `target` on a connection of its own, timed from the
    /// request to its answer, and, just before it, a `get` on one more: the
    /// same way through the daemon and this harness, with no name to
    /// resolve, as the floor of what any answer takes in this run.
    static func timedReach(_ target: String, in network: TestNetwork)
        async throws -> (answer: DestinationStatus, took: Duration, floor: Duration)
    {
        let getter = try await SocketClient(in: network, path: network.socketPath)
        let got = ContinuousClock.now
        try getter.send(ClientRequest.get.line)
        _ = try await getter.readStatus(timeout: .seconds(10))
        let floor = ContinuousClock.now - got
        let client = try await DestinationClient(in: network)
        let asked = ContinuousClock.now
        try client.socket.send(ClientRequest(.reach, destination: try Destination(parsing: target)).line)
        let answer = try await client.next(timeout: .seconds(10))
        return (answer, ContinuousClock.now - asked, floor)
    }

    @Test(.timeLimit(.minutes(1)))
    func anotherUsersFloodOfSlowNamesDelaysNoName() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        // Names not in hosts go to the gateway, which drops every query: each
        // takes the resolver's timeout (1 s) and holds a thread meanwhile.
        let etc = try await DestinationReachabilityTests.resolverFiles(
            network, hosts: "10.99.0.1 victim.test", nameServer: "10.77.0.1")
        try await NameResolutionTests.dropQueries(network)
        try await network.inHost("route add 10.99.0.0/24 via 10.77.0.1")
        let daemon = try await network.startDaemon(etc: etc)
        defer { daemon.signal(SIGTERM) }

        let flood = try Subprocess(
            TestNetwork.asUser(HostileClientTests.nobody) + ["/usr/bin/python3", Self.flooder, network.socketPath, "8", "16", "4"])
        defer { flood.signal(SIGKILL) }
        _ = try await eventually("the flood is under way") { flood.outputLines.first }
        var took: [String: [(took: Duration, floor: Duration)]] = [:]
        func victimAsks(_ when: String) async throws {
            let (answer, time, floor) = try await Self.timedReach("victim.test:443", in: network)
            #expect(answer.state == .reachable, "\(when): \(answer)")
            took[when, default: []].append((time, floor))
        }
        while flood.isRunning {
            try await victimAsks("during the flood")
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(took["during the flood"] != nil, "asked while the flood ran")
        let ended = ContinuousClock.now
        for after in [0.5, 2.5, 5.0] {
            try await Task.sleep(until: ended + .milliseconds(Int(after * 1000)))
            try await victimAsks("after the flood")
        }
        // Queued behind the flood, every answer took the resolution timeout
        // (5 s) and said `timeout`; behind even one flooded name it would
        // take that name's 1 s. Served in turn, one takes 6 ms alone here.
        // Under make test, every suite at once on two cores, a get alone
        // took up to 630 ms and the same get moments later 50 ms: what the
        // name adds beyond the get asked just before is what a flood could
        // add, and its median over every ask, during the flood and after
        // it, must stay under the 1 s one flooded name would cost (CI once
        // measured 137 ms over four asks, and once 569 ms beside the GTK
        // and systemd suites); no answer may wait anywhere near the timeout.
        let asks = took.values.flatMap { $0 }
        let added = asks.map { $0.took - $0.floor }.sorted()
        #expect(added[added.count / 2] < .milliseconds(900), "a name from /etc/hosts, beyond a get: \(took)")
        #expect(asks.allSatisfy { $0.took < .seconds(2) }, "a name from /etc/hosts: \(took)")
        #expect(daemon.isRunning)
    }
}
