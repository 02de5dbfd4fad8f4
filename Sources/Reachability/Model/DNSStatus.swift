/// Whether names can resolve: the status's `dns` block. Judged first with
/// what the kernel already knows (a route to each configured server, as the
/// daemon's uid, with no packet sent).
///
/// ```swift
/// let status = try await ReachabilityMonitor.currentStatus()
/// switch status.dns.state {
/// case .ok: print("a name server is routable")
/// case .unroutable: print("no route to \(status.dns.servers.map(\.address))")
/// case .none, .failing, .unknown, .unrecognized: print("names may not resolve")
/// }
/// ```
public struct DNSStatus: Codable, Sendable, Equatable {
    /// The verdict.
    public var state: DNSState
    /// The servers the resolver asks, in its order, each with its route answer.
    public var servers: [DNSServer]

    /// A verdict and the servers it rests on, as the daemon (or a test) builds it.
    public init(state: DNSState, servers: [DNSServer]) {
        self.state = state
        self.servers = servers
    }

    /// What a status says where nothing was judged: from a daemon that
    /// predates the block.
    public static let unknown = DNSStatus(state: .unknown, servers: [])

    private enum CodingKeys: String, CodingKey {
        case state, servers
    }

    /// Each part read on its own: a block a newer daemon wrote otherwise
    /// keeps what this version can read.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        state = (try? container.decode(DNSState.self, forKey: .state)) ?? .unknown
        servers = (try? container.decodeIfPresent([DNSServer].self, forKey: .servers)) ?? []
    }
}

/// The verdict on name resolution.
public enum DNSState: ProtocolValue {
    /// At least one configured server is routable, and no failure is known.
    case ok
    /// No server is configured.
    case none
    /// No configured server has a route.
    case unroutable
    /// Names fail while the path works.
    case failing
    /// Not judged (a daemon that predates the block).
    case unknown
    /// A verdict this version does not know, from a newer daemon: not `ok`.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [DNSState] = [.ok, .none, .unroutable, .failing, .unknown]

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .ok: "ok"
        case .none: "none"
        case .unroutable: "unroutable"
        case .failing: "failing"
        case .unknown: "unknown"
        case .unrecognized(let rawValue): rawValue
        }
    }
}

/// One name server and the kernel's answer for it.
public struct DNSServer: Codable, Sendable, Equatable {
    /// Its address, as reachd writes addresses (an IPv6 zone left out).
    public var address: String
    /// `reachable` when the kernel has a route for it out of a link that is
    /// up, else `unreachable`.
    public var state: DestinationState
    /// Why not, when unreachable.
    public var reason: UnreachableReason?
    /// The link its packets leave by, when reachable.
    public var interface: String?

    /// A server and its route answer, as the daemon (or a test) builds it.
    public init(address: String, state: DestinationState, reason: UnreachableReason?, interface: String?) {
        self.address = address
        self.state = state
        self.reason = reason
        self.interface = interface
    }

    private enum CodingKeys: String, CodingKey {
        case address, state, reason, interface
    }

    /// `null` where there is no reason or link, as every key of the protocol.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(address, forKey: .address)
        try container.encode(state, forKey: .state)
        try container.encode(reason, forKey: .reason)
        try container.encode(interface, forKey: .interface)
    }
}
