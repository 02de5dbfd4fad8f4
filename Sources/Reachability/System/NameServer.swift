/// A name server as `resolv.conf(5)` names it: an address, and for an IPv6
/// link-local one the link it is on (`fe80::1%eth0`, as NetworkManager
/// writes it). glibc asks it on that link (`sin6_scope_id`), so reachd
/// judges it there: the same address on another link is another server.
package struct NameServer: Hashable, Sendable, CustomStringConvertible {
    package var address: IPAddress
    /// The zone after `%`: a link's name, or its index in digits; `nil`
    /// for an unscoped address.
    package var zone: String?

    package init(_ address: IPAddress, zone: String? = nil) {
        self.address = address
        self.zone = zone
    }

    /// `fe80::1%eth0`, `192.0.2.53`; `nil` for anything else.
    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        let zone = parts.count > 1 ? String(parts[1]) : nil
        // A zone means something only for IPv6 (glibc ignores it for IPv4).
        self.init(address, zone: address.family == .ipv6 && zone?.isEmpty == false ? zone : nil)
    }

    package var description: String { zone.map { "\(address)%\($0)" } ?? address.description }
}
