#if canImport(Glibc)
import Glibc
#endif

/// A socket address of the check server that answered a probe: kept, per
/// family, so that a probe whose name does not resolve can still ask the
/// server at the address that last answered, and tell "names fail" from
/// "no Internet". The bytes of the `sockaddr_in` or `sockaddr_in6`
/// `getaddrinfo` gave, port included.
struct CheckServerAddress: Equatable, Sendable {
    let family: Int32
    let bytes: [UInt8]

    /// Calls `body` with the address as `connect` takes it.
    func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        bytes.withUnsafeBytes { raw in
            // The bytes came from a sockaddr; copied into storage aligned for one.
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) }
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(raw.count)) }
            }
        }
    }
}

extension CheckServerAddress {
    init(_ address: addrinfo) {
        self.init(family: address.ai_family, bytes: Array(UnsafeRawBufferPointer(start: address.ai_addr, count: Int(address.ai_addrlen))))
    }
}
