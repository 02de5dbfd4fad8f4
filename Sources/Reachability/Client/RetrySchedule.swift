/// When to try again after failures: at once the first time, then after
/// waits that double up to a cap (``Backoff``), back to
/// the shortest wait after a success. The follower's one schedule, for the
/// daemon and for restarting the in-process monitor alike.
struct RetrySchedule: Equatable {
    let backoff: Backoff
    /// When the next attempt is due; `nil` while none is scheduled.
    private(set) var due: ContinuousClock.Instant?
    private var failures = 0

    /// A schedule whose first attempt is due at `first`.
    init(_ backoff: Backoff, first: ContinuousClock.Instant?) {
        self.backoff = backoff
        due = first
    }

    /// Whether an attempt is due at `now`; if so it is taken off the schedule.
    mutating func takeIfDue(_ now: ContinuousClock.Instant) -> Bool {
        guard let due, now >= due else { return false }
        self.due = nil
        return true
    }

    /// Something worked: the next failure waits the shortest time again.
    mutating func succeeded() { failures = 0 }

    /// An attempt failed: the next one after the backoff's wait.
    mutating func failed(now: ContinuousClock.Instant) {
        due = now + backoff.delay(attempt: failures)
        failures += 1
    }

    /// Try again at `now` (a daemon that stopped answering answers again).
    mutating func tryAgain(at now: ContinuousClock.Instant) { due = now }
}
