/// Waits between attempts, doubling from `initial` up to `maximum`: how long
/// a ``ReachabilityMonitor`` waits before asking the daemon again, and every
/// other retry in reachd (the placeholder engine's, the connectivity
/// check's, the metrics listener's rebinding).
///
/// A client goes back to `initial` only once a subscription has lasted a
/// second after its first status: a daemon that accepts and never answers,
/// refuses with `too_many_clients`, or answers and hangs up, is a failed
/// attempt (docs/PROTOCOL.md, What clients should do).
///
/// ```swift
/// let patient = ReachabilityMonitor(backoff: Backoff(initial: .seconds(1), maximum: .seconds(30)))
/// ```
public struct Backoff: Sendable, Hashable {
    /// The wait after the first failure.
    public var initial: Duration
    /// The longest wait, however many failures follow.
    public var maximum: Duration

    /// Waits of `initial`, doubling after each failure up to `maximum`.
    public init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait before attempt `attempt` (0: the first retry).
    package func delay(attempt: Int) -> Duration {
        var delay = initial
        for _ in 0..<attempt where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }
}
