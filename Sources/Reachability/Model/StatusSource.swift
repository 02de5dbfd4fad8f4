/// Which component computed a status.
public enum StatusSource: ProtocolValue {
    /// The `reachd` daemon, through its Unix socket.
    case daemon
    /// This process, from its own netlink snapshot, because no daemon
    /// answered. On the wire, `embedded`.
    case inProcess
    /// A source this version does not know, from a newer daemon.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [StatusSource] = [.daemon, .inProcess]

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .daemon: "daemon"
        case .inProcess: "embedded"
        case .unrecognized(let rawValue): rawValue
        }
    }

    /// The name of ``inProcess`` before 0.14.
    @available(*, deprecated, renamed: "inProcess")
    public static var embedded: StatusSource { .inProcess }
}
