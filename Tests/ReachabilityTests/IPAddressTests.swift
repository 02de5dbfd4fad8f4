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

    /// An address keeps its bytes in place, not in an array: what it was
    /// made of is what it gives back, in order, and what an array of its
    /// bytes would say of it (equal, sorted, hashed apart), it says.
    @Test func anAddressHoldsTheBytesItWasMadeOf() throws {
        var generator = SystemRandomNumberGenerator()
        var seen: [IPAddress] = []
        for count in [4, 16] + (0..<400).map({ _ in Bool.random(using: &generator) ? 4 : 16 }) {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...3, using: &generator) }
            let address = try #require(IPAddress(family: count == 4 ? .ipv4 : .ipv6, bytes: bytes))
            #expect(address.bytes == bytes)
            #expect(address.count == count)
            #expect((0..<count).map { address[$0] } == bytes)
            #expect(address.withUnsafeBytes { Array($0) } == bytes)
            for other in seen.suffix(20) {
                #expect((address == other) == (address.bytes == other.bytes))
                #expect(address.precedes(other) == address.bytes.lexicographicallyPrecedes(other.bytes))
            }
            seen.append(address)
        }
        #expect(IPAddress(family: .ipv4, bytes: [1, 2, 3]) == nil)
        #expect(IPAddress(family: .ipv6, bytes: [UInt8](repeating: 0, count: 4)) == nil)
    }

    /// 0.0.0.0 and `::` hold the same zeros; they are not one address, nor
    /// one key of a set (the default routes of the two families).
    @Test func theTwoFamiliesZerosAreTwoAddresses() throws {
        let four = try #require(IPAddress.zero(.ipv4)), six = try #require(IPAddress.zero(.ipv6))
        #expect(four != six)
        #expect(Set([four, six]).count == 2)
        #expect(four == IPAddress("0.0.0.0") && six == IPAddress("::"))
    }

    @Test(arguments: [("127.0.0.1", true), ("127.255.0.9", true), ("128.0.0.1", false), ("::1", true), ("::2", false),
                      ("1::1", false), ("::ffff:127.0.0.1", false), ("0.0.0.1", false)])
    func loopbackIsThisHostsOwn(text: String, isLoopback: Bool) throws {
        #expect(try #require(IPAddress(text)).isLoopback == isLoopback)
    }

    @Test(arguments: [("169.254.1.1", true), ("169.253.1.1", false), ("fe80::1", true), ("febf::1", true),
                      ("fec0::1", false), ("fe00::1", false)])
    func linkLocalIsTheLinksOwn(text: String, isLinkLocal: Bool) throws {
        #expect(try #require(IPAddress(text)).isLinkLocal == isLinkLocal)
    }
}
