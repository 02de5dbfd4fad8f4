/// How much of a status a client asks for.
///
/// Most apps only care whether they are online: ask for the ``summary`` and a
/// container host creating a hundred veth pairs, which changes the interface
/// list a hundred times but not the answer, wakes them not once.
///
/// ```swift
/// let monitor = ReachabilityMonitor(detail: .summary)   // the default
/// let everything = ReachabilityMonitor(detail: .full)   // with `interfaces`
/// ```
public enum StatusDetail: String, Sendable, Hashable, CaseIterable {
    /// Everything, the interface list included: a status for every change the
    /// daemon publishes.
    case full
    /// Everything but the interface list (online, reachability, connectivity,
    /// metered, the families and their paths): a status only when one of
    /// those changes. ``NetworkStatus/interfaces`` is empty.
    case summary
}
