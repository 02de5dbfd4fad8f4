/// Which component computed a status.
public enum StatusSource: String, Codable, Sendable, CaseIterable {
    /// The `reachd` daemon, through its Unix socket.
    case daemon
    /// This process, from its own netlink snapshot, because no daemon answered.
    case embedded
}
