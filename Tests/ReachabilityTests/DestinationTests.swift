import Testing
@testable import Reachability

/// Targets as `reachd reach` and the library take them.
@Suite("Destinations")
struct DestinationTests {
    @Test(arguments: [
        ("api.example.com", "api.example.com", 443),
        ("api.example.com:8443", "api.example.com", 8443),
        ("api.example.com.", "api.example.com.", 443),
        ("10.8.0.1", "10.8.0.1", 443),
        ("10.8.0.1:22", "10.8.0.1", 22),
        ("fd00::10", "fd00::10", 443),
        ("[fd00::10]:8443", "fd00::10", 8443),
        ("[fd00::10]", "fd00::10", 443),
        ("_srv.intranet", "_srv.intranet", 443),
    ])
    func targetsParse(target: String, host: String, port: Int) throws {
        let destination = try Destination(parsing: target)
        #expect(destination.host == host && destination.port == port)
        #expect(try Destination(parsing: destination.description) == destination, "the description parses back")
    }

    @Test(arguments: [
        ("https://wiki.corp.example/api/items", "wiki.corp.example:443"),
        ("http://10.77.0.1:8080/items", "10.77.0.1:8080"),
        ("HTTP://Example.com", "Example.com:80"),
        ("https://[fd00::10]:8443/", "[fd00::10]:8443"),
        ("https://user:secret@api.example.com/", "api.example.com:443"),
    ])
    func aURLsServer(url: String, expected: String) throws {
        #expect(try Destination(url: url).description == expected)
    }

    /// One rule for every place a target is read: a URL names its server.
    @Test(arguments: [
        ("http://x.test/", "x.test:80"), ("https://x.test/items?a=1", "x.test:443"), ("x.test", "x.test:443"),
        ("x.test:8080", "x.test:8080"), ("[fd00::10]:8443", "[fd00::10]:8443"),
    ])
    func aTargetIsAURLOrHostAndPort(target: String, expected: String) throws {
        #expect(try Destination(target: target).description == expected)
    }

    @Test(arguments: [
        ("ftp://files.example.com/", DestinationError.notHTTPURL("ftp://files.example.com/")),
        ("https://fd00::10/", .notHTTPURL("https://fd00::10/")),
        ("http:///items", .notHTTPURL("http:///items")),
        ("api.example.com", .notHTTPURL("api.example.com")),
        ("http://api.example.com:99999/", .portOutOfRange("99999")),
    ])
    func notAServersURL(url: String, error: DestinationError) {
        #expect(throws: error) { try Destination(url: url) }
    }

    @Test func aURLsErrorSaysHowToWriteOne() {
        #expect(DestinationError.notHTTPURL("https://fd00::10/").description
            == #""https://fd00::10/" is not an http or https URL with a host; write http://HOST[:PORT]/PATH, with an IPv6 address in brackets"#)
    }

    @Test func descriptionsBracketIPv6Only() throws {
        #expect(try Destination(parsing: "fd00::10").description == "[fd00::10]:443")
        #expect(try Destination(parsing: "10.8.0.1:22").description == "10.8.0.1:22")
        #expect(try Destination(host: "api.example.com").description == "api.example.com:443")
    }

    @Test(arguments: [
        ("", DestinationError.emptyHost),
        (":443", .emptyHost),
        ("host:0", .portOutOfRange("0")),
        ("host:65536", .portOutOfRange("65536")),
        ("host:https", .portOutOfRange("https")),
        ("host:", .portOutOfRange("")),
        ("[fd00::10]:x", .portOutOfRange("x")),
        ("fd00::10::1", .malformed("fd00::10::1")),
        ("[10.0.0.1]:80", .malformed("[10.0.0.1]:80")),
        ("[fd00::10", .malformed("[fd00::10")),
        ("a b", .malformed("a b")),
        ("a..b", .malformed("a..b")),
        ("bad\u{1b}[31m", .malformed("bad\u{1b}[31m")),
        // inet_pton stops at a NUL: what follows it must not ride along (found by fuzzing).
        ("10.0.0.1\u{0}evil", .malformed("10.0.0.1\u{0}evil")),
        ("::\u{0}\u{0}x]y", .malformed("::\u{0}\u{0}x]y")),
        (String(repeating: "a", count: 64) + ".example", .malformed(String(repeating: "a", count: 64) + ".example")),
    ])
    func badTargetsSayWhatIsWrong(target: String, error: DestinationError) {
        #expect(throws: error) { try Destination(parsing: target) }
    }

    @Test func aNameOver253BytesIsRefusedByLength() {
        let long = Array(repeating: String(repeating: "a", count: 50), count: 6).joined(separator: ".")
        #expect(throws: DestinationError.hostTooLong(305)) { try Destination(parsing: long) }
        #expect(!DestinationError.hostTooLong(305).description.isEmpty)
        #expect(!DestinationError.malformed("\u{1b}").description.contains("\u{1b}"), "escaped for the terminal")
    }
}
