/// A route's type (RTN_*), as the kernel's route lookup answers it. Only a
/// unicast route carries packets out; the others say why not.
enum RouteType: Sendable, Hashable {
    case unicast
    /// RTN_LOCAL: the destination is this host.
    case local
    case broadcast, anycast, multicast
    /// RTN_BLACKHOLE: dropped silently.
    case blackhole
    /// RTN_UNREACHABLE: refused, "host unreachable".
    case unreachable
    /// RTN_PROHIBIT: refused, "administratively prohibited".
    case prohibit
    /// RTN_THROW: the lookup continues in the next rule's table.
    case `throw`
    /// A type this version does not name (RTN_UNSPEC, RTN_NAT, newer ones).
    case other(UInt8)

    init(kernelValue value: UInt8) {
        switch value {
        case 1: self = .unicast
        case 2: self = .local
        case 3: self = .broadcast
        case 4: self = .anycast
        case 5: self = .multicast
        case 6: self = .blackhole
        case 7: self = .unreachable
        case 8: self = .prohibit
        case 9: self = .throw
        case let other: self = .other(other)
        }
    }
}
