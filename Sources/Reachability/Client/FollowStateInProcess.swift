/// ``FollowState``'s decisions about the in-process half: when the engine
/// runs, what it holds, and what of its results is delivered.
extension FollowState {
    /// Starts the engine where the source allows: the status, and every
    /// destination the daemon does not answer for.
    mutating func startEngine() {
        guard configuration.source != .daemon else { return }
        engineRunning = true
        effects.append(.startEngine)
    }

    mutating func stopEngine() {
        engineRunning = false
        effects.append(.stopEngine)
    }

    mutating func engineStarted(_ lastStatus: NetworkStatus?, _ now: ContinuousClock.Instant) {
        // Stopped since it was started: nothing of it counts.
        guard engineRunning else { return }
        if !phase.daemonAnswers {
            announce(source: .inProcess)
            // Its status, the first or what it followed while the daemon
            // answered: a daemon that stopped answering missed the same changes.
            if let lastStatus { deliverIfNews(lastStatus, line: nil) }
        }
        holdInProcess()
    }

    /// Makes the engine hold every destination while no daemon answers, and
    /// only those the daemon refused while one does.
    mutating func holdInProcess() {
        guard engineRunning else { return }
        effects.append(.holdInProcess(followed.ordered(followed.inProcess(daemonAnswers: phase.daemonAnswers))))
    }

    /// Delivers what the in-process half computed: its status while no
    /// daemon answers, its answers for the destinations it holds.
    mutating func computed(_ events: [InProcessFollower.Event]) {
        guard engineRunning else { return }
        for event in events {
            switch event {
            case .status(let status): if !phase.daemonAnswers { deliverIfNews(status, line: nil) }
            case .destination(let key, let status): forward(key, status, line: nil)
            case .reopened(let error): updates.append(.problem(.inProcessFailed(error, daemonFailures: [])))
            }
        }
    }

    /// Netlink failed in-process: the end of a session that can't wait,
    /// else a problem passed on and logged, and netlink tried again after a
    /// while, in-process or with the daemon's next try.
    mutating func engineFailed(_ error: NetlinkError, _ now: ContinuousClock.Instant) {
        stopEngine()
        guard configuration.retryingInProcess else { return end(.inProcessFailed(error, daemonFailures: [])) }
        updates.append(.problem(.inProcessFailed(error, daemonFailures: [])))
        effects.append(.log(.error, "in-process network monitor failed; retrying", ["error": "\(error)"]))
        discovery.scheduleUnlessDue(now)
    }
}
