/// When lookups are asked again because an IPv4 route's removal may have
/// answered them: the kernel sends RTM_DELROUTE before `fib_table_delete`
/// unlinks the route, so an answer asked at once may be the route going
/// away (1 in 1,000 to 1 in 10,000 removals, for tens of microseconds,
/// `bench/removal.py`; longer where the remover is preempted). The status's
/// lookups keep one (``NetworkWatcher``), and so does each watched
/// destination (``DestinationTracker``): the same rule, written once.
package struct RemovalRecheck: Sendable {
    /// How long after a removal its answers are asked again: past a
    /// preempted remover's wait for its CPU (a few scheduler slices of 3 ms).
    package static let settles = Duration.milliseconds(10)

    /// When the answers are asked again; `nil`: none is waited for.
    private(set) var due: ContinuousClock.Instant?

    /// Takes in answers asked at `now`, each for its destination: one that
    /// a route in `removed` may have given sets the time, a ``settles``
    /// away, unless an earlier one is set. `settled`: these are all the
    /// answers the time stands for, so asking them at or after it ends it.
    mutating func asked(
        _ answers: some Sequence<(IPAddress, RouteLookupResult?)>, removed: some Collection<RemovedRoute>,
        at now: ContinuousClock.Instant, settled: Bool = true
    ) {
        if settled, let due, now >= due { self.due = nil }
        guard !removed.isEmpty else { return }
        if answers.contains(where: { destination, answer in
            removed.contains { $0.mayHaveAnswered(destination, with: answer) }
        }) {
            lost(at: now)
        }
    }

    /// Notifications were lost at `now` (an overrun, a failed socket), a
    /// removal among them perhaps: the answers are asked again as after one.
    mutating func lost(at now: ContinuousClock.Instant) {
        due = Deadline.earliest(due, now + Self.settles)
    }

    /// `expiry` (when an answer's route expires), or this time where it
    /// comes first and is still to come after `now`.
    func bounding(_ expiry: ContinuousClock.Instant?, after now: ContinuousClock.Instant? = nil) -> ContinuousClock.Instant? {
        guard let due, now.map({ due > $0 }) ?? true else { return expiry }
        return Deadline.earliest(expiry, due)
    }
}
