/// Why a destination, or one of its addresses, is not reachable: the kernel's
/// route lookup said no (the same reasons as a family's, ``UnreachableReason``),
/// or the resolver did. The raw values are the wire spelling, one word per
/// reason: `no_route`, `nxdomain`.
///
/// ```swift
/// let answer = try await ReachabilityMonitor.reachability(of: try Destination(parsing: "api.example.com"))
/// switch answer.reason {
/// case .route(.noCarrier)?: print("plug the cable in")
/// case .nxdomain?: print("check the server's name")
/// default: break
/// }
/// ```
public enum DestinationReason: ProtocolValue, CustomStringConvertible {
    /// The route lookup's reason, as a family's.
    case route(UnreachableReason)
    /// The name does not exist (EAI_NONAME).
    case nxdomain
    /// The name exists but has no address (of the family asked for).
    case noAddress
    /// The resolver failed: no name server answered, or it answered with an error.
    case resolverFailed
    /// The resolver took longer than the daemon waits; it keeps trying, and
    /// a late answer is published.
    case timeout
    /// A reason this version does not know, from a newer daemon. Never
    /// `.route(.unrecognized)`: what no list names is this.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [DestinationReason] =
        UnreachableReason.allCases.map(route) + [.nxdomain, .noAddress, .resolverFailed, .timeout]

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .route(let reason): reason.rawValue
        case .nxdomain: "nxdomain"
        case .noAddress: "no_address"
        case .resolverFailed: "resolver_failed"
        case .timeout: "timeout"
        case .unrecognized(let rawValue): rawValue
        }
    }

    public var description: String {
        switch self {
        case .route(let reason): reason.description
        case .nxdomain: "no such name"
        case .noAddress: "the name has no address"
        case .resolverFailed: "the resolver failed"
        case .timeout: "the resolver timed out"
        case .unrecognized(let rawValue): rawValue.escapingControlCharacters
        }
    }
}
