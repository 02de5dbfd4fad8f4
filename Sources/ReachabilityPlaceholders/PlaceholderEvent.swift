import Reachability

/// What the engine tells the app. Edge-triggered on what is visible: the
/// appear/disappear events fire only when the kind shown changes (rows, a
/// spinner, "no data"...); a change around the same kind (a banner, a footer,
/// the refreshing spinner) is one ``updated(_:)``. A reload that ends as it
/// began costs two `updated` events, no redraw of the whole screen.
///
/// ```swift
/// switch event {
/// case .willDisappear, .willAppear, .didDisappear: break
/// case .didAppear(let state), .updated(let state): render(state)
/// case .retryRequested: reload()
/// }
/// ```
public enum PlaceholderEvent: Sendable, Hashable {
    case willDisappear(PlaceholderState)
    case willAppear(PlaceholderState)
    case didDisappear(PlaceholderState)
    case didAppear(PlaceholderState)
    /// The same kind is shown, with another decoration or refreshing state.
    case updated(PlaceholderState)
    /// The network came back while a network failure is shown: load again.
    /// `attempt` counts the retries since the last successful refresh.
    case retryRequested(attempt: Int)
}
