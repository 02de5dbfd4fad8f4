/// The route the kernel would use for traffic to the outside: the egress
/// interface, the next-hop gateway unless the route is on-link, and the
/// address the kernel would send from. A change of any of them moves every
/// new connection, and may break the open ones (``StatusChange/path(_:from:to:)``).
///
/// ```swift
/// if let path = status.primary {
///     print("\(path.interface) via \(path.gateway ?? "on-link")")
/// }
/// ```
public struct NetworkPath: Codable, Sendable, Hashable {
    /// The egress link's name.
    public var interface: String
    /// The egress link's interface index.
    public var index: Int
    /// The family of the route.
    public var family: AddressFamily
    /// The next hop, or `nil` for an on-link route (a point-to-point link, say).
    public var gateway: String?
    /// The address the kernel would send from (its route lookup's
    /// preferred source); `nil` from a daemon that predates saying so.
    /// A DHCP renumbering changes it and nothing else.
    public var source: String?

    /// A path as the kernel's route lookup returned it.
    public init(interface: String, index: Int, family: AddressFamily, gateway: String?, source: String? = nil) {
        self.interface = interface
        self.index = index
        self.family = family
        self.gateway = gateway
        self.source = source
    }

    private enum CodingKeys: String, CodingKey {
        case interface, index, family, gateway, source
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(interface, forKey: .interface)
        try container.encode(index, forKey: .index)
        try container.encode(family, forKey: .family)
        // Explicit null: the protocol promises the key is always there.
        try container.encode(gateway, forKey: .gateway)
        try container.encode(source, forKey: .source)
    }
}
