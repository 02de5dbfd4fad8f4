/// What the engine tells the app.
public enum PlaceholderEvent: Sendable, Hashable {
    case willDisappear(PlaceholderState)
    case willAppear(PlaceholderState)
    case didDisappear(PlaceholderState)
    case didAppear(PlaceholderState)
    /// The network came back while a network failure is shown: load again.
    /// `attempt` counts the retries since the last successful refresh.
    case retryRequested(attempt: Int)
}
