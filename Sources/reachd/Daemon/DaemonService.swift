import Reachability

/// The shape every service of the daemon's loop has (``DaemonServer``):
/// when the loop must wake for it though none of its descriptors is ready,
/// what it waits on once a pass is over, and each published status. Its
/// descriptors' events reach it through ``DaemonWakeUp``, in the pass order
/// the loop states. The loop keeps its services in one list, the order in
/// which they end a pass and hear a status, the announcer last: a new
/// service is its own file and a place in the list (and, with descriptors,
/// a token and a line in ``DaemonWakeUp``).
protocol DaemonService: AnyObject {
    /// When the loop must wake for this service even if nothing is ready:
    /// a due probe, an idle client, a watchdog ping. `nil`: never; an idle
    /// daemon sleeps.
    var nextDeadline: ContinuousClock.Instant? { get }

    /// After each pass, once everything that could bind, pause or resume a
    /// descriptor of its has run: waits on each of them unless paused.
    func endPass(_ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>)

    /// A status just published, once every subscriber has it: the services
    /// hear it in the list's order. Most have no use for it.
    func observe(_ status: NetworkStatus, _ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>)
}

extension DaemonService {
    func observe(_ status: NetworkStatus, _ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) {}
}
