/// Whether an app could reach one destination, as the kernel would route the
/// app's own packets (its uid, TCP, its port): the answer of
/// ``ReachabilityMonitor/reachability(of:family:source:socketPath:timeout:)`` and
/// of the daemon's `reach` and `watch` requests.
///
/// ```swift
/// let api = try Destination(parsing: "api.example.com")
/// let answer = try await ReachabilityMonitor.reachability(of: api)
/// if let via = answer.via {
///     print("\(answer.target) reachable via \(via.interface) (table \(via.table))")
/// } else {
///     print("\(answer.target) \(answer.state): \(answer.reason.map(String.init(describing:)) ?? "")")
/// }
/// ```
///
/// "Reachable" is a route-level verdict: the server may still refuse the
/// connection. docs/PROTOCOL.md ("Destinations") is the contract.
public struct DestinationStatus: Codable, Sendable, Hashable {
    /// The watch's id, as the client chose it; `nil` for a one-shot answer.
    public var id: String?
    /// `HOST:PORT`, an IPv6 literal in brackets.
    public var target: String
    /// The host name or address literal.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// Reachable, unreachable, unresolved or pending.
    public var state: DestinationState
    /// Why the destination is not reachable (for an unreachable one, the
    /// first address's reason); `nil` when reachable or pending.
    public var reason: DestinationReason?
    /// The path of the first reachable address; `nil` when none is.
    public var via: DestinationRoute?
    /// Each address the name resolved to (at most 8), in the resolver's
    /// order, with its own verdict; empty while pending or unresolved.
    public var addresses: [AddressReachability]
    /// Increases with every destination answer a daemon sends.
    public var seq: UInt64
    /// Who answered: the daemon, or this process from its own netlink lookups.
    public var source: StatusSource

    /// Whether the app's packets would go somewhere: ``state`` is `.reachable`.
    public var isReachable: Bool { state == .reachable }

    /// An answer as a daemon sends it; for tests and for apps that relay answers.
    public init(
        id: String? = nil, target: String, host: String, port: Int, state: DestinationState,
        reason: DestinationReason?, via: DestinationRoute?, addresses: [AddressReachability], seq: UInt64,
        source: StatusSource
    ) {
        self.id = id
        self.target = target
        self.host = host
        self.port = port
        self.state = state
        self.reason = reason
        self.via = via
        self.addresses = addresses
        self.seq = seq
        self.source = source
    }

    private enum CodingKeys: String, CodingKey {
        case id, target, host, port, state, reason, via, addresses, seq, source
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // Explicit nulls: the protocol promises every key is there.
        try container.encode(id, forKey: .id)
        try container.encode(target, forKey: .target)
        try container.encode(host, forKey: .host)
        try container.encode(port, forKey: .port)
        try container.encode(state, forKey: .state)
        try container.encode(reason, forKey: .reason)
        try container.encode(via, forKey: .via)
        try container.encode(addresses, forKey: .addresses)
        try container.encode(seq, forKey: .seq)
        try container.encode(source, forKey: .source)
    }

    /// The same answer, apart from its `seq` and `id`: what decides whether a
    /// watch publishes.
    package func hasSameAnswer(as other: DestinationStatus) -> Bool {
        state == other.state && reason == other.reason && via == other.via && addresses == other.addresses
    }
}

/// Where a destination's packets would leave: the egress link, the next hop,
/// the routing table whose route the kernel chose, and the source address.
public struct DestinationRoute: Codable, Sendable, Hashable {
    /// The egress link's name.
    public var interface: String
    /// The egress link's interface index.
    public var index: Int
    /// The family of the route.
    public var family: AddressFamily
    /// The next hop, or `nil` for an on-link route.
    public var gateway: String?
    /// The routing table (254 is `main`, 51820 wg-quick's, say).
    public var table: UInt32
    /// The source address the kernel would pick.
    public var source: String

    /// A path as the kernel's route lookup returned it.
    public init(interface: String, index: Int, family: AddressFamily, gateway: String?, table: UInt32, source: String) {
        self.interface = interface
        self.index = index
        self.family = family
        self.gateway = gateway
        self.table = table
        self.source = source
    }

    private enum CodingKeys: String, CodingKey {
        case interface, index, family, gateway, table, source
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(interface, forKey: .interface)
        try container.encode(index, forKey: .index)
        try container.encode(family, forKey: .family)
        try container.encode(gateway, forKey: .gateway)
        try container.encode(table, forKey: .table)
        try container.encode(source, forKey: .source)
    }
}

/// One address of a destination, judged on its own.
public struct AddressReachability: Codable, Sendable, Hashable {
    /// The address, as text.
    public var address: String
    /// Its family.
    public var family: AddressFamily
    /// `.reachable` or `.unreachable`.
    public var state: DestinationState
    /// Why it is not reachable; `nil` when it is.
    public var reason: DestinationReason?
    /// Where its packets would go; `nil` when unreachable.
    public var via: DestinationRoute?

    /// Whether this address is reachable.
    public var isReachable: Bool { state == .reachable }

    /// One address's verdict, as a daemon sends it.
    public init(
        address: String, family: AddressFamily, state: DestinationState, reason: DestinationReason?,
        via: DestinationRoute?
    ) {
        self.address = address
        self.family = family
        self.state = state
        self.reason = reason
        self.via = via
    }

    private enum CodingKeys: String, CodingKey {
        case address, family, state, reason, via
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(address, forKey: .address)
        try container.encode(family, forKey: .family)
        try container.encode(state, forKey: .state)
        try container.encode(reason, forKey: .reason)
        try container.encode(via, forKey: .via)
    }
}
