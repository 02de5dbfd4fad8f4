import Testing
@testable import Reachability

/// The name servers of a `resolv.conf(5)`, read as glibc's resolver reads them.
@Suite("Resolver configuration")
struct ResolverConfigurationTests {
    @Test func theFirstThreeNameserversInOrder() {
        let text = """
            # written by NetworkManager
            search example.com
            nameserver 192.0.2.53
            ; a comment
            nameserver   2001:db8::53
            nameserver\tfe80::1%eth0
            nameserver 198.51.100.53
            options edns0
            """
        let servers = ResolverConfiguration(parsing: text).servers.map(\.description)
        #expect(servers == ["192.0.2.53", "2001:db8::53", "fe80::1"], "glibc asks three; a zone is not part of the address")
    }

    @Test func whatDoesNotParseIsSkippedAsTheResolverSkipsIt() {
        let text = "nameserver\nnameserver not-an-address\nnameservers 192.0.2.1\n#nameserver 192.0.2.2\nnameserver 192.0.2.3"
        #expect(ResolverConfiguration(parsing: text).servers.map(\.description) == ["192.0.2.3"])
        #expect(ResolverConfiguration(parsing: "").servers.isEmpty)
    }

    @Test func systemdResolvedsStubPointsElsewhere() {
        #expect(ResolverConfiguration(parsing: "nameserver 127.0.0.53\noptions edns0 trust-ad").pointsAtResolvedStub)
        #expect(!ResolverConfiguration(parsing: "nameserver 127.0.0.53\nnameserver 192.0.2.53").pointsAtResolvedStub,
            "a real server beside the stub is asked too")
        #expect(!ResolverConfiguration(parsing: "").pointsAtResolvedStub)
    }
}
