import Foundation
import Testing
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// When a client asks the daemon whether it runs (a `get` on a connection of
/// its own) after the kernel reported a change, and when the subscription's
/// news answers for it: only bytes the daemon wrote after the change count.
/// The sentinel is real; the kernel's report is told (`kernelChanged`).
@Suite("The liveness probe and the subscription's news")
struct DaemonLivenessTests {
    /// A listening socket standing in for the daemon, a subscription to it,
    /// and the daemon's end of that subscription.
    final class Daemon {
        let directory: URL
        let path: String
        let listener: Int32
        let subscription: DaemonConnection
        let end: Int32

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-live-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("reachd.sock").path
            listener = try UnixSocket.listen(at: path)
            _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
            subscription = try DaemonConnection(path: path, timeout: .seconds(1))
            end = accept(listener, nil, nil)
        }

        /// The daemon publishes a line on the subscription.
        func publish() throws {
            try UnixSocket.writeAll(end, Array(#"{"type":"status"}"#.utf8) + [10])
        }

        /// Connections made to it since the last call: the probes.
        func probes() -> Int {
            var count = 0
            while case let probe = accept(listener, nil, nil), probe >= 0 {
                close(probe)
                count += 1
            }
            return count
        }

        deinit {
            close(end)
            close(listener)
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func liveness(of daemon: Daemon) throws -> DaemonLiveness {
        var liveness = try DaemonLiveness()
        liveness.listen(to: daemon.path)
        return liveness
    }

    static func says(_ verdict: DaemonLiveness.Verdict) -> String {
        switch verdict {
        case .none: "nothing"
        case .notAnswering: "not answering"
        case .answeringAgain: "answering again"
        case .gone: "gone"
        }
    }

    @Test func newsWrittenAfterTheChangeAnswersForTheDaemon() throws {
        let daemon = try Daemon()
        var liveness = try Self.liveness(of: daemon)
        let changed = ContinuousClock.now
        let verdict = liveness.verdict(probeReadable: false, kernelChanged: true, subscription: daemon.subscription, now: changed)
        #expect(Self.says(verdict) == "nothing")
        #expect(liveness.nextDeadline == changed + DaemonLiveness.newsGrace, "the news has its grace")
        try daemon.publish()
        #expect(try daemon.subscription.readAvailable()?.count == 1)
        liveness.heard(daemon.subscription)
        #expect(liveness.nextDeadline == nil, "no probe due")
        let later = liveness.verdict(probeReadable: false, kernelChanged: false, subscription: daemon.subscription,
                                     now: changed + .seconds(2))
        #expect(Self.says(later) == "nothing")
        #expect(daemon.probes() == 0, "the daemon was asked nothing")
    }

    /// A line queued before the client heard the change may be older than
    /// it: the daemon may have stopped since. It is read, and the daemon asked.
    @Test func newsQueuedBeforeTheChangeWasHeardProvesNothing() throws {
        let daemon = try Daemon()
        var liveness = try Self.liveness(of: daemon)
        try daemon.publish()
        let changed = ContinuousClock.now
        _ = liveness.verdict(probeReadable: false, kernelChanged: true, subscription: daemon.subscription, now: changed)
        #expect(try daemon.subscription.readAvailable()?.count == 1)
        liveness.heard(daemon.subscription)
        let due = try #require(liveness.nextDeadline, "still due")
        #expect(due == changed + DaemonLiveness.newsGrace)
        #expect(daemon.probes() == 0, "not before the grace")
        _ = liveness.verdict(probeReadable: false, kernelChanged: false, subscription: daemon.subscription, now: due)
        #expect(daemon.probes() == 1, "asked once the grace passed")
        #expect(liveness.nextDeadline == due + DaemonLiveness.answerTimeout, "and waits for the answer")
    }

    /// Two changes, the news of the first read after the second: the daemon
    /// may have stopped between them, so it is asked, when the first's
    /// grace ends (a flood of changes does not put the question off).
    @Test func aLaterChangeNeedsNewsOfItsOwn() throws {
        let daemon = try Daemon()
        var liveness = try Self.liveness(of: daemon)
        let first = ContinuousClock.now
        _ = liveness.verdict(probeReadable: false, kernelChanged: true, subscription: daemon.subscription, now: first)
        try daemon.publish()
        let second = first + .milliseconds(100)
        _ = liveness.verdict(probeReadable: false, kernelChanged: true, subscription: daemon.subscription, now: second)
        #expect(try daemon.subscription.readAvailable()?.count == 1)
        liveness.heard(daemon.subscription)
        #expect(liveness.nextDeadline == first + DaemonLiveness.newsGrace, "due when the first change's grace ends")
        _ = liveness.verdict(
            probeReadable: false, kernelChanged: false, subscription: daemon.subscription, now: first + DaemonLiveness.newsGrace)
        #expect(daemon.probes() == 1)
        // News of the second change, once asked: the answer still counts.
        try daemon.publish()
        _ = try daemon.subscription.readAvailable()
        liveness.heard(daemon.subscription)
        #expect(liveness.nextDeadline == first + DaemonLiveness.newsGrace + DaemonLiveness.answerTimeout)
    }
}
