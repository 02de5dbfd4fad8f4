/// How far an address reaches (RT_SCOPE_*). The kernel orders scopes by
/// number, wider first, so a scope this version does not name still compares.
enum AddressScope: Sendable, Hashable {
    /// RT_SCOPE_UNIVERSE (0): global.
    case universe
    /// RT_SCOPE_SITE (200).
    case site
    /// RT_SCOPE_LINK (253): IPv6 link-local, say.
    case link
    /// RT_SCOPE_HOST (254): loopback.
    case host
    case other(UInt8)

    init(kernelValue value: UInt8) {
        switch value {
        case 0: self = .universe
        case 200: self = .site
        case 253: self = .link
        case 254: self = .host
        case let other: self = .other(other)
        }
    }

    var kernelValue: UInt8 {
        switch self {
        case .universe: 0
        case .site: 200
        case .link: 253
        case .host: 254
        case .other(let value): value
        }
    }

    /// Wider than link scope (universe or site): can source traffic beyond the link.
    var isRoutable: Bool { kernelValue < AddressScope.link.kernelValue }

    /// Wider than host scope: present on a link, not only on this host.
    var isOnALink: Bool { kernelValue < AddressScope.host.kernelValue }

    /// As the protocol's `scope` spells it: `ip addr`'s words, else the number.
    var name: String {
        switch self {
        case .universe: "global"
        case .site: "site"
        case .link: "link"
        case .host: "host"
        case .other(let value): "\(value)"
        }
    }
}
