/// Where a monitor, or a one-shot question, takes its answers from: the
/// daemon, in-process netlink, or the daemon while it answers and
/// in-process meanwhile. ``ReachabilityMonitor/Source`` is its other name.
///
/// ```swift
/// let monitor = ReachabilityMonitor(source: .automatic)
/// let status = try await ReachabilityMonitor.currentStatus(source: .inProcess)
/// ```
public enum SourcePreference: Sendable, Hashable {
    /// The daemon if one answers, otherwise the in-process monitor, switching
    /// back to the daemon when it returns. The default. A daemon that stops
    /// answering (a stopped process keeps its connections) is noticed
    /// within 1.5 s of the next change the kernel reports.
    case automatic
    /// Only the daemon. While it is away (gone, or not answering)
    /// nothing is delivered and ``ReachabilityMonitor/lastError`` says
    /// why; on its return the current status is, at once.
    case daemon
    /// Only the in-process netlink monitor.
    case inProcess

    /// The name of ``inProcess`` before 0.14.
    @available(*, deprecated, renamed: "inProcess")
    public static var embedded: SourcePreference { .inProcess }
}
