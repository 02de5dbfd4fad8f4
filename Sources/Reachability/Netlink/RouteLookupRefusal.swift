import Glibc

/// Why the kernel refused a route lookup (RTM_GETROUTE), named here so that
/// no raw errno leaves `Netlink/`.
enum RouteLookupRefusal: Sendable, Hashable {
    /// ENETUNREACH: no route matches.
    case noRoute
    /// EHOSTUNREACH: an `unreachable` route matched.
    case unreachableRoute
    /// EINVAL: a `blackhole` route matched.
    case blackholeRoute
    /// EACCES: a `prohibit` route matched.
    case prohibitedRoute
    /// The answer was not one the kernel sends (a truncated or unparsable
    /// frame, an out-of-range error code): judged as no usable route.
    case malformedAnswer
    /// An errno this version does not name; kept, as the kernel may add one.
    case other(errno: Int32)

    init(errno: Int32) {
        switch errno {
        case ENETUNREACH: self = .noRoute
        case EHOSTUNREACH: self = .unreachableRoute
        case EINVAL: self = .blackholeRoute
        case EACCES: self = .prohibitedRoute
        case EPROTO: self = .malformedAnswer
        case let other: self = .other(errno: other)
        }
    }
}
