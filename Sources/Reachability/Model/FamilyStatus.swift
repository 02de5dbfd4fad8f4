/// The state of one address family: how far it reaches, why it does not reach
/// further, and the path the kernel would use when it is online.
public struct FamilyStatus: Codable, Sendable, Hashable {
    /// How far the family reaches: offline, local or online.
    public var reachability: ReachabilityLevel
    /// Why the family is not online; `nil` when it is.
    public var reason: UnreachableReason?
    /// The route the kernel would use; `nil` unless the family is online.
    public var path: NetworkPath?

    /// A family's state, as the evaluator (or a test) found it.
    public init(reachability: ReachabilityLevel, reason: UnreachableReason?, path: NetworkPath?) {
        self.reachability = reachability
        self.reason = reason
        self.path = path
    }

    private enum CodingKeys: String, CodingKey {
        case reachability, reason, path
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reachability, forKey: .reachability)
        try container.encode(reason, forKey: .reason)
        try container.encode(path, forKey: .path)
    }
}
