/// One network interface as the kernel reports it.
public struct InterfaceStatus: Codable, Sendable, Hashable {
    public var name: String
    public var index: Int
    /// Administratively up (`IFF_UP`).
    public var up: Bool
    /// The lower layer reports carrier (`IFF_LOWER_UP`).
    public var carrier: Bool
    /// RFC 2863 operational state as the kernel names it: `unknown`, `notpresent`,
    /// `down`, `lowerlayerdown`, `testing`, `dormant` or `up`.
    public var operstate: String
    /// The loopback interface is listed but never counts towards reachability.
    public var loopback: Bool
    public var addresses: [InterfaceAddress]

    public init(
        name: String, index: Int, up: Bool, carrier: Bool, operstate: String,
        loopback: Bool, addresses: [InterfaceAddress]
    ) {
        self.name = name
        self.index = index
        self.up = up
        self.carrier = carrier
        self.operstate = operstate
        self.loopback = loopback
        self.addresses = addresses
    }
}

/// An address assigned to an interface.
public struct InterfaceAddress: Codable, Sendable, Hashable {
    public var address: String
    public var prefix: Int
    public var family: AddressFamily
    /// `global`, `site`, `link`, `host`, or the kernel's number for other scopes.
    public var scope: String

    public init(address: String, prefix: Int, family: AddressFamily, scope: String) {
        self.address = address
        self.prefix = prefix
        self.family = family
        self.scope = scope
    }
}
