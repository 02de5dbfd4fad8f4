/// One network interface as the kernel reports it.
public struct InterfaceStatus: Codable, Sendable, Hashable {
    /// The kernel's name for the link (`eth0`, `wlan0`).
    public var name: String
    /// The kernel's interface index.
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
    /// Its addresses of both families, as the kernel lists them.
    public var addresses: [InterfaceAddress]
    /// Whether traffic over it may cost money: configured, or guessed from the
    /// link's kind (a modem, PPP, tethering).
    public var metered: Metering

    /// A link as reported by the kernel.
    public init(
        name: String, index: Int, up: Bool, carrier: Bool, operstate: String,
        loopback: Bool, addresses: [InterfaceAddress], metered: Metering = .no
    ) {
        self.name = name
        self.index = index
        self.up = up
        self.carrier = carrier
        self.operstate = operstate
        self.loopback = loopback
        self.addresses = addresses
        self.metered = metered
    }

    private enum CodingKeys: String, CodingKey {
        case name, index, up, carrier, operstate, loopback, addresses, metered
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        index = try container.decode(Int.self, forKey: .index)
        up = try container.decode(Bool.self, forKey: .up)
        carrier = try container.decode(Bool.self, forKey: .carrier)
        operstate = try container.decode(String.self, forKey: .operstate)
        loopback = try container.decode(Bool.self, forKey: .loopback)
        addresses = try container.decode([InterfaceAddress].self, forKey: .addresses)
        // Absent from daemons that predate metering.
        metered = try container.decodeIfPresent(Metering.self, forKey: .metered) ?? .no
    }
}

/// An address assigned to an interface.
public struct InterfaceAddress: Codable, Sendable, Hashable {
    /// The address in its usual text form (`192.0.2.10`, `fe80::1`).
    public var address: String
    /// The prefix length of the address's subnet.
    public var prefix: Int
    /// IPv4 or IPv6.
    public var family: AddressFamily
    /// `global`, `site`, `link`, `host`, or the kernel's number for other scopes.
    public var scope: String

    /// An address as reported by the kernel.
    public init(address: String, prefix: Int, family: AddressFamily, scope: String) {
        self.address = address
        self.prefix = prefix
        self.family = family
        self.scope = scope
    }
}
