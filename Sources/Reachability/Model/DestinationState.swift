/// Whether an app's packets to a destination would go somewhere, as the
/// kernel would route them. The raw values are the wire spelling.
///
/// ```swift
/// let answer = try await ReachabilityMonitor.reachability(of: try Destination(parsing: "api.example.com"))
/// switch answer.state {
/// case .reachable: print("show the list")
/// case .unreachable, .unresolved: print("show no network")
/// case .pending, .unknown, .unrecognized: print("show a spinner")
/// }
/// ```
public enum DestinationState: ProtocolValue, CustomStringConvertible {
    /// At least one address has a unicast route out of a link that is up with
    /// carrier, and a usable source address.
    case reachable
    /// The host resolved, but no address of it is reachable; the reason says
    /// why for the first.
    case unreachable
    /// The host name did not resolve; the reason says how it failed.
    case unresolved
    /// The first resolution of the name is still running.
    case pending
    /// The kernel's answer to the route lookup was lost (its reply queue
    /// overran); asked again within a second. Not known either way.
    case unknown
    /// A state this version does not know, from a newer daemon: not reachable.
    case unrecognized(String)

    /// An answer to give a one-shot question: not `pending` (the name still
    /// resolving) nor `unknown` (a route answer lost, asked again within a
    /// second), either of which a later answer follows.
    package var isSettled: Bool {
        switch self {
        case .reachable, .unreachable, .unresolved, .unrecognized: true
        case .pending, .unknown: false
        }
    }

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [DestinationState] = [.reachable, .unreachable, .unresolved, .pending, .unknown]

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .reachable: "reachable"
        case .unreachable: "unreachable"
        case .unresolved: "unresolved"
        case .pending: "pending"
        case .unknown: "unknown"
        case .unrecognized(let rawValue): rawValue
        }
    }

    public var description: String { rawValue.escapingControlCharacters }
}
