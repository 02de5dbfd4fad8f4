import Testing
@testable import Reachability

/// The one grammar of a host and a port, as a command-line target and as a
/// URL's authority take it.
@Suite("Host and port")
struct HostPortTests {
    @Test(arguments: [
        ("api.example.com", "api.example.com", nil),
        ("api.example.com:8443", "api.example.com", 8443),
        ("10.8.0.1:22", "10.8.0.1", 22),
        ("[fd00::10]", "fd00::10", nil),
        ("[fd00::10]:8443", "fd00::10", 8443),
    ] as [(String, String, Int?)])
    func bothGrammarsReadTheSame(text: String, host: String, port: Int?) throws {
        for grammar in [HostPort.Grammar.target, .url] {
            let parsed = try HostPort(parsing: text[...], as: grammar)
            #expect(parsed.host == host && parsed.port == port, "\(grammar)")
        }
    }

    /// Where a command line and RFC 3986 differ: a bare IPv6 address, and a
    /// colon with no port after it.
    @Test func aTargetAndAURLDifferOnlyWhereTheyMust() throws {
        #expect(try HostPort(parsing: "fd00::1", as: .target) == HostPort(parsing: "[fd00::1]", as: .target))
        #expect(throws: HostPort.Failure.unbracketedIPv6("fd00::1")) { try HostPort(parsing: "fd00::1", as: .url) }
        #expect(throws: HostPort.Failure.unbracketedIPv6("fd00::1:8080")) { try HostPort(parsing: "fd00::1:8080", as: .url) }
        #expect(try HostPort(parsing: "host:", as: .url).port == nil, "RFC 3986: port = *DIGIT")
        #expect(throws: HostPort.Failure.badPort("")) { try HostPort(parsing: "host:", as: .target) }
    }

    @Test(arguments: [
        ("", HostPort.Failure.emptyHost), (":80", .emptyHost), ("host:0", .badPort("0")), ("host:65536", .badPort("65536")),
        ("host:+80", .badPort("+80")), ("host:８０", .badPort("８０")), ("[fd00::1]x", .malformed), ("[fd00::1", .malformed),
        ("[10.0.0.1]:80", .malformed), ("[]", .malformed), ("a:b:c", .malformed), ("[fd00::1]:x", .badPort("x")),
    ])
    func whatIsNotAHostAndPort(text: String, failure: HostPort.Failure) {
        for grammar in [HostPort.Grammar.target, .url] {
            #expect(throws: failure, "\(grammar)") { try HostPort(parsing: text[...], as: grammar) }
        }
    }

    /// One grammar: what one reader takes, the others take the same way.
    @Test func theDestinationTheCheckURLAndThePortalURLAgree() throws {
        let destination = try Destination(parsing: "[fd00::1]:8080")
        #expect(destination.host == "fd00::1" && destination.port == 8080)
        #expect(PortalURL.validated("http://[fd00::1]:8080/login") == "http://[fd00::1]:8080/login")
        #expect(PortalURL.validated("http://fd00::1/login") == nil, "a URL's IPv6 address needs brackets")
        #expect(PortalURL.validated("http://portal.example:https/") == nil, "a port is a number")
    }
}
