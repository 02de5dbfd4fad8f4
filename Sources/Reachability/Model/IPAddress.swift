#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as the kernel sends it: network-order bytes.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    // The bytes in place, IPv4's four first and the rest zero, and the
    // family as a flag: a value of plain bytes, copied without a retain.
    // An array of them was a heap allocation per address, retained and
    // released at every copy, and a route change makes and copies dozens
    // (the lookups' answers, the prefixes it moves, the routes it removes).
    private let leading: UInt64
    private let trailing: UInt64
    private let isIPv6: Bool

    package var family: AddressFamily { isIPv6 ? .ipv6 : .ipv4 }

    /// 4 or 16.
    package var count: Int { isIPv6 ? 16 : 4 }

    /// The bytes, network order, in a new array: `withUnsafeBytes` reads
    /// them where they are.
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: (leading, trailing)) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    /// The byte at `index`, from 0, below `count`.
    package subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < count, "byte \(index) of a \(count)-byte address")
        return Swift.withUnsafeBytes(of: (leading, trailing)) { $0[index] }
    }

    package init?(family: AddressFamily, bytes: [UInt8]) {
        guard let address = bytes.withUnsafeBytes({ IPAddress(family: family, bytes: $0) }) else { return nil }
        self = address
    }

    /// From the bytes where they are (a netlink attribute), with no array
    /// between.
    package init?(family: AddressFamily, bytes: UnsafeRawBufferPointer) {
        switch family {
        case .ipv4: guard bytes.count == 4 else { return nil }
        case .ipv6: guard bytes.count == 16 else { return nil }
        case .unrecognized: return nil
        }
        var words: (UInt64, UInt64) = (0, 0)
        Swift.withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
        self.init(leading: words.0, trailing: words.1, isIPv6: bytes.count == 16)
    }

    /// The family's zero address, 0.0.0.0 or `::`: the default route's prefix.
    package static func zero(_ family: AddressFamily) -> IPAddress? {
        switch family {
        case .ipv4: IPAddress(leading: 0, trailing: 0, isIPv6: false)
        case .ipv6: IPAddress(leading: 0, trailing: 0, isIPv6: true)
        case .unrecognized: nil
        }
    }

    /// Whether its bytes come before `other`'s, as two byte strings sort.
    package func precedes(_ other: IPAddress) -> Bool {
        withUnsafeBytes { mine in other.withUnsafeBytes { mine.lexicographicallyPrecedes($0) } }
    }

    /// Parses dotted-quad or RFC 4291 text with `inet_pton`. Text with a NUL
    /// is none: `inet_pton` would read only what comes before it, and
    /// `"::\0anything"` would pass for `::`.
    package init?(_ text: String) {
        guard !text.utf8.contains(0) else { return nil }
        var words: (UInt64, UInt64) = (0, 0)
        if inet_pton(AF_INET, text, &words) == 1 {
            self.init(leading: words.0, trailing: 0, isIPv6: false)
        } else if inet_pton(AF_INET6, text, &words) == 1 {
            self.init(leading: words.0, trailing: words.1, isIPv6: true)
        } else {
            return nil
        }
    }

    private init(leading: UInt64, trailing: UInt64, isIPv6: Bool) {
        (self.leading, self.trailing, self.isIPv6) = (leading, trailing, isIPv6)
    }

    /// 127.0.0.0/8 or ::1: this host's own.
    package var isLoopback: Bool {
        // ::1's one set bit is in its last byte, whatever the host's order.
        isIPv6 ? leading == 0 && trailing == UInt64(1).bigEndian : self[0] == 127
    }

    /// fe80::/10 or 169.254.0.0/16: reachable only on the link.
    var isLinkLocal: Bool {
        isIPv6 ? self[0] == 0xfe && self[1] & 0xc0 == 0x80 : self[0] == 169 && self[1] == 254
    }

    package var description: String {
        // IPv4 by hand: glibc's inet_ntop writes it with sprintf, and every
        // status names its gateways and sources (callgrind: 7k instructions
        // of a route change's 143k). The digits go straight into the
        // string's own bytes, at most 15, which a Swift string holds without
        // an allocation: a `String` per byte still cost 1.3k.
        if !isIPv6 {
            return String(unsafeUninitializedCapacity: 15) { text in
                var count = 0
                for position in 0..<4 {
                    let byte = self[position]
                    if position > 0 {
                        text[count] = UInt8(ascii: ".")
                        count += 1
                    }
                    if byte >= 100 {
                        text[count] = UInt8(ascii: "0") + byte / 100
                        count += 1
                    }
                    if byte >= 10 {
                        text[count] = UInt8(ascii: "0") + byte / 10 % 10
                        count += 1
                    }
                    text[count] = UInt8(ascii: "0") + byte % 10
                    count += 1
                }
                return count
            }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = withUnsafeBytes { inet_ntop(AF_INET6, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
    }
}
