/// An IP address family, spelled as on the wire (`"ipv4"`, `"ipv6"`).
public enum AddressFamily: ProtocolValue, CustomStringConvertible {
    case ipv4
    case ipv6
    /// A family this version does not know, from a newer daemon: an address
    /// of it is listed, but no family of a status is it.
    case unrecognized(String)

    /// The values this version knows; never `.unrecognized`.
    public static let allCases: [AddressFamily] = [.ipv4, .ipv6]

    /// The wire spelling.
    public var rawValue: String {
        switch self {
        case .ipv4: "ipv4"
        case .ipv6: "ipv6"
        case .unrecognized(let rawValue): rawValue
        }
    }

    public var description: String {
        switch self {
        case .ipv4: "IPv4"
        case .ipv6: "IPv6"
        case .unrecognized(let rawValue): rawValue
        }
    }
}
