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

    /// The status a `get` asked for is the answer, whatever follows it in
    /// the same read: a line that does not decode after it is no fault of
    /// the answer's (a one-shot read through the session's DaemonLink
    /// decoded the whole read first, and failed on it).
    @Test(.timeLimit(.minutes(1)))
    func whatFollowsTheStatusInTheSameReadIsNotItsBusiness() throws {
        let daemon = try ScriptedDaemon { _, _ in [FakeDaemon.newerDaemonsLine + "\n{\"type\":"] }
        let answer = try OneShotQuery(source: .daemon, socketPaths: [daemon.path]).status(timeout: .seconds(5))
        #expect(answer.value.source == .daemon && answer.daemonFailures.isEmpty, "\(answer.value)")
    }
}
