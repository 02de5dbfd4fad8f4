/// An IP address family, spelled as on the wire (`"ipv4"`, `"ipv6"`).
public enum AddressFamily: String, Codable, Sendable, CaseIterable, CustomStringConvertible {
    case ipv4
    case ipv6

    public var description: String {
        switch self {
        case .ipv4: "IPv4"
        case .ipv6: "IPv6"
        }
    }
}
