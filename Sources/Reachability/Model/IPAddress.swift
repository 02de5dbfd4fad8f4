#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as the kernel sends it: network-order bytes.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    package let family: AddressFamily
    package let bytes: [UInt8]

    /// The bytes, hashed as one block: their count says the family (an
    /// address is 4 or 16 of them). Hashed field by field (the family's
    /// enum, then each byte) it was most of the cost of the sets a route
    /// change fills, of prefixes and of removed routes (callgrind).
    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    package init?(family: AddressFamily, bytes: [UInt8]) {
        switch family {
        case .ipv4: guard bytes.count == 4 else { return nil }
        case .ipv6: guard bytes.count == 16 else { return nil }
        case .unrecognized: return nil
        }
        self.family = family
        self.bytes = bytes
    }

    /// Parses dotted-quad or RFC 4291 text with `inet_pton`. Text with a NUL
    /// is none: `inet_pton` would read only what comes before it, and
    /// `"::\0anything"` would pass for `::`.
    package init?(_ text: String) {
        guard !text.utf8.contains(0) else { return nil }
        var storage = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &storage) == 1 {
            self.init(family: .ipv4, bytes: Array(storage.prefix(4)))
        } else if inet_pton(AF_INET6, text, &storage) == 1 {
            self.init(family: .ipv6, bytes: storage)
        } else {
            return nil
        }
    }

    /// 127.0.0.0/8 or ::1: this host's own.
    package var isLoopback: Bool {
        switch family {
        case .ipv4: bytes[0] == 127
        case .ipv6: bytes == Array(repeating: 0, count: 15) + [1]
        case .unrecognized: false
        }
    }

    /// fe80::/10 or 169.254.0.0/16: reachable only on the link.
    var isLinkLocal: Bool {
        switch family {
        case .ipv4: bytes[0] == 169 && bytes[1] == 254
        case .ipv6: bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80
        case .unrecognized: false
        }
    }

    package var description: String {
        // IPv4 by hand: glibc's inet_ntop writes it with sprintf, and every
        // status names its gateways and sources (callgrind: 7k instructions
        // of a route change's 143k). The digits go straight into the
        // string's own bytes, at most 15, which a Swift string holds without
        // an allocation: a `String` per byte still cost 1.3k.
        if family == .ipv4, bytes.count == 4 {
            return String(unsafeUninitializedCapacity: 15) { text in
                var count = 0
                for (position, byte) in bytes.enumerated() {
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
        let af = family == .ipv4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(af, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
    }
}
