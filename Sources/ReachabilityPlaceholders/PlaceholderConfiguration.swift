import Reachability

/// The engine's timings. The defaults follow Android's ContentLoadingProgressBar
/// (500 ms before a spinner shows, 500 ms at least once shown) and a 2 s grace
/// before "offline" relabels what is on screen.
public struct PlaceholderConfiguration: Sendable, Hashable {
    /// How long a change into `loading` waits before it shows.
    public var loadingDelay: Duration
    /// How long `loading` stays once shown.
    public var loadingMinimum: Duration
    /// How long online→offline must last before it relabels what is shown.
    public var offlineGrace: Duration
    /// The delay before the second retry request of a run of failures; it doubles after each.
    public var retryInitialBackoff: Duration
    /// The longest wait between retries, however many fail.
    public var retryMaximumBackoff: Duration
    /// Whether a section with a header and no rows counts as content.
    public var headerOnlySections: HeaderOnlySectionPolicy

    /// The timings, each defaulting to the values above.
    public init(
        loadingDelay: Duration = .milliseconds(500), loadingMinimum: Duration = .milliseconds(500),
        offlineGrace: Duration = .seconds(2), retryInitialBackoff: Duration = .seconds(1),
        retryMaximumBackoff: Duration = .seconds(30), headerOnlySections: HeaderOnlySectionPolicy = .empty
    ) {
        self.loadingDelay = loadingDelay
        self.loadingMinimum = loadingMinimum
        self.offlineGrace = offlineGrace
        self.retryInitialBackoff = retryInitialBackoff
        self.retryMaximumBackoff = retryMaximumBackoff
        self.headerOnlySections = headerOnlySections
    }

    /// No delay for the first retry after a network return; then doubling, capped.
    func retryDelay(afterAttempts attempts: Int) -> Duration {
        guard attempts > 0 else { return .zero }
        return Backoff(initial: retryInitialBackoff, maximum: retryMaximumBackoff)
            .delay(attempt: attempts - 1)
    }
}
