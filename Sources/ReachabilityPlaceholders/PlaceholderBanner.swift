/// The strip over rows that are shown while the network is down or the last
/// refresh failed: the rows stay, and this says why they may be old.
public struct PlaceholderBanner: Sendable, Hashable {
    /// One line: "You're offline. This is the list as it last loaded."
    public var message: String
    /// The banner's button, if any.
    public var action: PlaceholderAction

    /// A banner saying `message`, with `action` as its button.
    public init(message: String, action: PlaceholderAction) {
        self.message = message
        self.action = action
    }
}
