/// The destination a route notification names: RTA_DST and `rtm_dst_len`,
/// the default route being its family's zero address with length 0.
///
/// The kernel picks a route for a lookup by the longest prefix that holds the
/// destination, so a route added, removed or replaced can move the answer
/// for an address only when its prefix holds that address. That is how a
/// route event elsewhere in the table (a container's veth, a BGP feed)
/// costs no lookup at all, while routes are still never mirrored.
struct RoutePrefix: Sendable, Hashable {
    var address: IPAddress
    /// Leading bits that count: at most the address's width.
    var length: Int

    init?(address: IPAddress, length: Int) {
        guard length >= 0, length <= address.count * 8 else { return nil }
        self.address = address
        self.length = length
    }

    /// Whether a packet to `destination` could be sent by this route.
    func contains(_ destination: IPAddress) -> Bool {
        guard destination.family == address.family else { return false }
        let whole = length / 8
        for index in 0..<whole where destination[index] != address[index] { return false }
        let bits = length % 8
        guard bits > 0 else { return true }
        let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
        return destination[whole] & mask == address[whole] & mask
    }
}
