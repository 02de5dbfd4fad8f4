import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// A container host creates and deletes veth pairs all day without changing
/// whether it is online: a summary subscriber must not hear of it.
@Suite("Summary subscriptions", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct SummaryTests {
    /// What starting containers does to the host's links, and stopping them.
    static func vethPairsUp(_ pairs: Int) -> [String] {
        (0..<pairs).map { "link add ct\($0) type veth peer name ce\($0)" } + (0..<pairs).map { "link set ct\($0) up" }
    }
    static func vethPairsDown(_ pairs: Int) -> [String] { (0..<pairs).map { "link del ct\($0)" } }

    @Test func aSummarySubscriberHearsOnlyOfChangesToTheSummary() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let (full, firstFull) = try await SocketClient.subscribed(to: network.socketPath)
        let summary = try SocketClient(path: network.socketPath)
        try summary.send(ClientRequest(.subscribe, detail: .summary).line)
        let firstSummary = try await summary.readStatus()
        #expect(firstSummary.isSummary && firstSummary.interfaces.isEmpty)
        #expect(firstSummary.hasSameSummary(as: firstFull) && firstSummary.online)

        // The full subscriber hears the links come, then go, then the route.
        // Each step waits for the one before to be heard: the daemon may
        // take a whole batch in one reading, and links that came and went
        // within it would be no news at all.
        var fullLines: [NetworkStatus] = []
        func readFull(until heard: (NetworkStatus) -> Bool) async throws {
            repeat { fullLines.append(try await full.readStatus()) } while !heard(fullLines.last!)
        }
        try await network.batchInHost(Self.vethPairsUp(10))
        try await readFull { $0.interfaces.contains { $0.name == "ct9" && $0.up } }
        try await network.batchInHost(Self.vethPairsDown(10))
        try await readFull { !$0.interfaces.contains { $0.name.hasPrefix("ct") } }
        try await network.inHost("route del default")
        try await readFull { !$0.online }
        // The summary subscriber's next line is the route's, and nothing came before it.
        let next = try await summary.readStatus()
        #expect(!next.online && next.isSummary)
        #expect(next.seq == fullLines.last?.seq, "one numbering for both forms")
        #expect(next.seq > firstSummary.seq)

        // A get asks for the same forms.
        let getter = try SocketClient(path: network.socketPath)
        try getter.send(ClientRequest(.get, detail: .summary).line)
        let got = try await getter.readLine()
        #expect(got.map { !$0.contains("\"interfaces\"") && $0.contains(#""detail":"summary""#) } == true, "\(got ?? "")")
        _ = daemon
    }

    /// `reachd monitor` (through the daemon and in-process) prints a line when
    /// the host's answer changes, not when a container starts; `--json`
    /// prints every change unless `--summary` says otherwise.
    @Test(arguments: [true, false])
    func monitorIsQuietWhileContainersComeAndGo(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon() }
        let source = throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon"
        let human = try network.startReachd("monitor", source)
        let summaryJSON = try network.startReachd("monitor", "--json", "--summary", source)
        let fullJSON = try network.startReachd("monitor", "--json", source)
        for monitor in [human, summaryJSON, fullJSON] {
            _ = try await eventually("the monitor prints the current status") { monitor.outputLines.first }
        }

        // Step by step, each seen by the full monitor: how many statuses a
        // batch of link changes publishes, and how many one read brings (of
        // which the newest is printed), depend on timing.
        let links = try #require(fullJSON.statuses.last).interfaces.count
        try await network.batchInHost((0..<10).map { "link add ct\($0) type veth peer name ce\($0)" })
        _ = try await eventually("the full monitor sees the pairs come") {
            fullJSON.statuses.last?.interfaces.count == links + 20 ? true : nil
        }
        try await network.batchInHost((0..<10).map { "link del ct\($0)" })
        _ = try await eventually("and go") { fullJSON.statuses.last?.interfaces.count == links ? true : nil }
        try await network.inHost("route del default")
        _ = try await eventually("the full monitor sees the route go", timeout: .seconds(5)) {
            fullJSON.outputLines.last?.contains(#""online":false"#) == true ? true : nil
        }
        // The route's removal itself, not any second line: then count.
        _ = try await eventually("the summary monitors see the route go", timeout: .seconds(5)) {
            human.outputLines.last?.contains("ipv4=local") == true
                && summaryJSON.outputLines.last?.contains(#""online":false"#) == true ? true : nil
        }
        #expect(human.outputLines.count == 2, "\(human.outputLines)")
        #expect(summaryJSON.outputLines.count == 2, "\(summaryJSON.outputLines)")
        #expect(summaryJSON.outputLines.allSatisfy { !$0.contains("\"interfaces\"") })
        #expect(fullJSON.outputLines.count >= 4, "the first, with the pairs, without them, offline: \(fullJSON.outputLines.count)")
        for monitor in [human, summaryJSON, fullJSON] { monitor.signal(SIGTERM) }
        _ = daemon
    }

    /// The library's monitor asks for the summary unless told otherwise. (In
    /// process it reduces what it computes the same way: `monitor --no-daemon`
    /// above is that code.)
    @Test func theLibrarysMonitorFollowsTheSummaryByDefault() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        // Made in the daemon's network, as a program running there would.
        let socket = network.socketPath
        let (summaries, fulls) = try await network.onThreadInHost {
            (ReachabilityMonitor(source: .daemon, socketPath: socket),
             ReachabilityMonitor(source: .daemon, socketPath: socket, detail: .full))
        }
        defer {
            summaries.cancel()
            fulls.cancel()
        }
        let summaryCount = Counter(), fullCount = Counter()
        summaries.onChange { _ in summaryCount.add() }
        fulls.onChange { _ in fullCount.add() }
        let first = try await summaries.firstStatus()
        #expect(first.isSummary && first.online)
        #expect(try await !fulls.firstStatus().isSummary)

        // Step by step, each seen by the full monitor: how many statuses the
        // daemon publishes for a batch, and how many one read brings (of
        // which the newest counts), depend on timing.
        let links = try #require(fulls.currentStatus).interfaces.count
        try await network.batchInHost((0..<10).map { "link add ct\($0) type veth peer name ce\($0)" })
        _ = try await eventually("the full monitor sees the pairs come") {
            fulls.currentStatus?.interfaces.count == links + 20 ? true : nil
        }
        try await network.batchInHost((0..<10).map { "link del ct\($0)" })
        _ = try await eventually("and go") { fulls.currentStatus?.interfaces.count == links ? true : nil }
        try await network.inHost("route del default")
        _ = try await eventually("both see the route go", timeout: .seconds(5)) {
            summaries.currentStatus?.online == false && fulls.currentStatus?.online == false ? true : nil
        }
        #expect(summaryCount.value == 2, "the first, and offline")
        #expect(fullCount.value >= 4, "the first, with the pairs, without them, offline: \(fullCount.value)")
        _ = daemon
    }
}

/// Counts calls from the monitor's thread.
private final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
