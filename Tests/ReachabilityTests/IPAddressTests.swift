#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Reachability

/// An address's text is what glibc writes for it: IPv4 is written by hand
/// (inet_ntop's sprintf cost every status), and must not drift from it.
struct IPAddressTests {
    @Test func anIPv4AddressIsWrittenAsInetNtopWritesIt() throws {
        var generator = SystemRandomNumberGenerator()
        let edges: [[UInt8]] = [[0, 0, 0, 0], [255, 255, 255, 255], [10, 0, 0, 1], [192, 0, 2, 100], [1, 10, 100, 9]]
        let random = (0..<2000).map { _ in (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        for bytes in edges + random {
            let address = try #require(IPAddress(family: .ipv4, bytes: bytes))
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            _ = bytes.withUnsafeBytes { inet_ntop(AF_INET, $0.baseAddress, &text, socklen_t(text.count)) }
            let expected = String(decoding: text.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
            #expect(address.description == expected)
            #expect(IPAddress(expected) == address, "round trip")
        }
    }

    @Test func anIPv6AddressIsWrittenInItsShortestForm() {
        #expect(IPAddress("2001:db8:0:0:0:0:0:1")?.description == "2001:db8::1")
        #expect(IPAddress("::ffff:192.0.2.1")?.description == "::ffff:192.0.2.1")
    }
}
