import Reachability

/// Where a published family's packets leave: its link and next hop, as the
/// kernel's notifications and route lookups name them (an index, an
/// address). What the neighbour watch and the closed-connection watch
/// judge the kernel's word against.
struct PathEgress: Hashable {
    var index: Int
    /// `nil` for a path with no gateway (a point-to-point link).
    var gateway: IPAddress?

    /// Each online family's.
    static func of(_ status: NetworkStatus) -> [AddressFamily: PathEgress] {
        var egress: [AddressFamily: PathEgress] = [:]
        for path in [status.ipv4.path, status.ipv6.path].compactMap({ $0 }) {
            egress[path.family] = PathEgress(index: path.index, gateway: path.gateway.flatMap(IPAddress.init))
        }
        return egress
    }
}
