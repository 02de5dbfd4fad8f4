import Synchronization
import Testing
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
        try await Task.sleep(for: FailureReporter.spacing * 2.5)
        let times = sent.withLock { $0 }
        #expect(times.count == 2, "the first at once, the other 999 as one: \(times.count)")
        if times.count == 2 {
            #expect(times[0] - start < .milliseconds(500))
            #expect(times[1] - times[0] >= FailureReporter.spacing, "no sooner than the spacing")
        }
        // Settled: the next report is sent at once again, alone.
        reporter.report()
        try await Task.sleep(for: .milliseconds(300))
        #expect(sent.withLock { $0.count } == 3)
    }
}
