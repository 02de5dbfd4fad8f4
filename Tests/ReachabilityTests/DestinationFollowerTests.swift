import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Reachability

/// How a follower of destinations moves between sources: a daemon that
/// restarts, a daemon that appears while the answers come from in-process.
@Suite("Destination follower")
struct DestinationFollowerTests {
    static let backoff = ReachabilityMonitor.Backoff(initial: .milliseconds(10), maximum: .milliseconds(40))

    /// A daemon's answer to watch `0`, as its line.
    static func line(_ state: DestinationState) -> String {
        let route = DestinationRoute(interface: "eth0", index: 2, family: .ipv4, gateway: nil, table: 254, source: "192.0.2.7")
        let status = DestinationStatus(
            id: "0", target: "api.example.com:443", host: "api.example.com", port: 443, state: state, reason: nil,
            via: state == .reachable ? route : nil, addresses: [], seq: 1, source: .daemon)
        return String(decoding: DaemonMessage.destination(status).line().dropLast(), as: UTF8.self)
    }

    /// A restarted daemon resolves the name afresh and says `pending` first:
    /// the app keeps the answer it had rather than flashing a spinner, and
    /// hears the answer that follows.
    @Test func aRestartedDaemonsFirstPendingIsNotDelivered() throws {
        let daemon = try FakeDaemon(answeringInTurn: [Self.line(.reachable), Self.line(.pending) + "\n" + Self.line(.unreachable)])
        let follower = try DestinationFollower(
            DestinationQuery(source: .daemon, socketPaths: [daemon.path], family: nil), backoff: Self.backoff)
        var states: [DestinationState] = []
        try follower.run([Destination(parsing: "api.example.com")], until: .now + .milliseconds(800)) { update in
            states.append(update.status.state)
            return true
        }
        #expect(daemon.connections >= 3, "the follower went back to the daemon after each hang-up")
        #expect(states == [.reachable, .unreachable])
    }

    /// A daemon that refuses a watch over its limits refuses it again: an
    /// automatic follower answers in-process from then on instead of asking
    /// it again and again.
    @Test func aRefusedWatchIsAnsweredInProcessWithoutAskingAgain() throws {
        let refusal = String(decoding: DaemonMessage.errorLine(
            code: RequestError.tooManyWatches, message: "over 1 watch per connection", id: "1").dropLast(), as: UTF8.self)
        let daemon = try FakeDaemon(answeringInTurn: [Self.line(.reachable) + "\n" + refusal])
        let follower = try DestinationFollower(
            DestinationQuery(source: .automatic, socketPaths: [daemon.path], family: nil), backoff: Self.backoff)
        var sources: [StatusSource] = []
        let destinations = try ["api.example.com", "127.0.0.1:443"].map { try Destination(parsing: $0) }
        try follower.run(destinations, until: .now + .milliseconds(800)) { update in
            sources.append(update.status.source)
            return true
        }
        #expect(daemon.connections == 1, "asked once")
        #expect(sources.first == .daemon && sources.contains(.embedded), "\(sources)")
    }

    /// Answered in-process while no daemon runs, an automatic follower asks
    /// again with backoff and takes the daemon's answer once one runs.
    @Test(.timeLimit(.minutes(1)))
    func anAutomaticFollowerGoesBackToADaemonThatAppears() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-follow-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Where the daemon will be: a link made once it runs.
        let socketPath = directory.appendingPathComponent("reachd.sock").path
        let follower = try DestinationFollower(
            DestinationQuery(source: .automatic, socketPaths: [socketPath], family: nil), backoff: Self.backoff)
        let seen = Seen()
        let destination = try Destination(parsing: "127.0.0.1:443")
        startDetachedThread {
            try? follower.run([destination]) { update in
                seen.sources.withLock { $0.append(update.status.source) }
                return true
            }
            seen.finished.withLock { $0 = true }
        }
        defer { follower.cancel() }
        _ = try await eventually("an answer computed in-process") { seen.sources.withLock { $0.first } }
        let daemon = try FakeDaemon(answeringInTurn: [Self.line(.reachable)])
        try FileManager.default.createSymbolicLink(atPath: socketPath, withDestinationPath: daemon.path)
        _ = try await eventually("the daemon's answer", timeout: .seconds(5)) {
            seen.sources.withLock { $0.contains(StatusSource.daemon) ? true : nil }
        }
        #expect(seen.sources.withLock { $0.first } == StatusSource.embedded)
        follower.cancel()
        _ = try await eventually("the follower ends when cancelled") { seen.finished.withLock { $0 } ? true : nil }
    }

    /// What the follower's thread saw.
    private final class Seen: Sendable {
        let sources = Mutex<[StatusSource]>([])
        let finished = Mutex(false)
    }
}
