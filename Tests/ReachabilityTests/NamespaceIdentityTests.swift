#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Reachability

/// How the daemon tells whether a client is of its network namespace, on
/// the connection itself: the cookie of the socket it accepted, else the
/// peer's `/proc/PID/ns/net` (kernels before 5.14 have no cookie).
@Suite("A peer's network namespace")
struct NamespaceIdentityTests {
    static func connectedPair() throws -> (Int32, Int32) {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        return (ends[0], ends[1])
    }

    @Test func aPeerOfThisNamespaceIsToldByTheCookieAndByProc() throws {
        let (ours, theirs) = try Self.connectedPair()
        defer { close(ours); close(theirs) }
        let named = try #require(NetworkNamespace.current(socket: ours))
        #expect(named.cookie != nil && named.hasPeer(on: theirs) == true, "by the cookie")
        // As a kernel without cookies would name it: /proc decides.
        let withoutCookie = NetworkNamespace(inode: named.inode, device: named.device, cookie: nil)
        #expect(withoutCookie.hasPeer(on: theirs) == true, "by /proc/PID/ns/net")
    }

    @Test func anotherNamespaceIsToldApartByEither() throws {
        let (ours, theirs) = try Self.connectedPair()
        defer { close(ours); close(theirs) }
        let named = try #require(NetworkNamespace.current(socket: ours))
        let other = NetworkNamespace(inode: named.inode + 1, device: named.device, cookie: named.cookie.map { $0 + 1 })
        #expect(other.hasPeer(on: theirs) == false, "by the cookie")
        let otherWithoutCookie = NetworkNamespace(inode: named.inode + 1, device: named.device, cookie: nil)
        #expect(otherWithoutCookie.hasPeer(on: theirs) == false, "by /proc/PID/ns/net")
        // Named by a cookie alone (a daemon without /proc) and none here: nothing tells.
        #expect(NetworkNamespace(inode: 0, device: 0, cookie: nil).hasPeer(on: theirs) == nil)
    }
}
