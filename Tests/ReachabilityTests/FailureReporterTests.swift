import Synchronization
import Testing
import TestSupport
@testable import Reachability

/// An app's failure reports reach the daemon without blocking the app and
/// without a connection per report.
@Suite("Failure reports")
struct FailureReporterTests {
    @Test func aBurstIsSentOnceAtOnceAndOnceWhenTheSpacingEnds() async throws {
        let sent = Mutex<[ContinuousClock.Instant]>([])
        let reporter = FailureReporter { sent.withLock { $0.append(.now) } }
        let start = ContinuousClock.now
        for _ in 0..<1000 { reporter.report() }
        #expect(ContinuousClock.now - start < .milliseconds(100), "report() never waits for the send")
        _ = try await eventually("the burst's second send") { sent.withLock { $0.count } >= 2 ? true : nil }
        // Past the spacing after the second send, and half as much again:
        // a third would have come by then.
        let second = sent.withLock { $0[1] }
        #expect(try await holdsThroughout(second + FailureReporter.spacing * 1.5 - .now) { sent.withLock { $0.count } == 2 },
                "no third send")
        let times = sent.withLock { $0 }
        #expect(times.count == 2, "the first at once, the other 999 as one: \(times.count)")
        if times.count == 2 {
            #expect(times[0] - start < .milliseconds(500))
            #expect(times[1] - times[0] >= FailureReporter.spacing, "no sooner than the spacing")
        }
        // Settled: the next report is sent at once again, alone.
        let reported = ContinuousClock.now
        reporter.report()
        _ = try await eventually("the settled report") { sent.withLock { $0.count } >= 3 ? true : nil }
        #expect(sent.withLock { $0[2] } - reported < .milliseconds(300), "sent at once, not after the spacing")
        #expect(try await holdsThroughout(.milliseconds(300)) { sent.withLock { $0.count } == 3 }, "alone")
    }
}
