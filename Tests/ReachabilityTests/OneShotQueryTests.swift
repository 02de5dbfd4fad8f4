import Foundation
import Testing
import TestSupport
@testable import Reachability

/// One answer without following: one budget for every daemon tried.
@Suite("One-shot query")
struct OneShotQueryTests {
    /// Two daemons that take the connection and never answer (stopped, say)
    /// cost the budget once, not once each: `reach` used to give each one
    /// the whole timeout.
    @Test(.timeLimit(.minutes(1)))
    func twoStoppedDaemonsCostOneBudget() throws {
        let stopped = try (0..<2).map { _ in try ScriptedDaemon { _, _ in [] } }
        let query = OneShotQuery(source: .daemon, socketPaths: stopped.map(\.path))
        let budget: Duration = .milliseconds(600)
        for ask in [{ _ = try query.status(timeout: budget) },
                    { _ = try query.destinations([Destination(parsing: "10.0.0.1")], family: nil, timeout: budget) }] {
            let started = ContinuousClock.now
            let error = #expect(throws: ReachabilityError.self) { try ask() }
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= budget && elapsed < budget * 1.5, "\(elapsed) for two daemons and a budget of \(budget)")
            #expect(error?.daemonFailures.count == 2, "both were tried: \(String(describing: error))")
        }
    }
}
