import Reachability
import Testing
@testable import reachd

@Suite("Connectivity check: configuration, responses, verdicts")
struct ConnectivityVerdictTests {
    @Test func urlsAreParsedAndOnlyPlainHTTPIsAccepted() throws {
        let check = try ConnectivityCheck.parse(
            url: "http://10.77.0.1:8080/generate_204", expectation: .status(204), timeout: .seconds(5), interval: .seconds(300))
        #expect(check.host == "10.77.0.1" && check.port == 8080 && check.path == "/generate_204")
        let v6 = try ConnectivityCheck.parse(url: "http://[fd77::1]/check", expectation: .status(204), timeout: .seconds(5), interval: .seconds(300))
        #expect(v6.host == "fd77::1" && v6.port == 80 && v6.path == "/check")
        #expect(String(decoding: v6.request, as: UTF8.self).contains("Host: [fd77::1]\r\n"))
        let bare = try ConnectivityCheck.parse(url: "http://example.com", expectation: .status(204), timeout: .seconds(5), interval: .seconds(300))
        #expect(bare.path == "/" && String(decoding: bare.request, as: UTF8.self).hasPrefix("GET / HTTP/1.1\r\nHost: example.com\r\n"))
        #expect(String(decoding: bare.request, as: UTF8.self).contains("Connection: close\r\n"))
        #expect(throws: ConnectivityCheckError.notPlainHTTP("https://example.com/")) {
            try ConnectivityCheck.parse(url: "https://example.com/", expectation: .status(204), timeout: .seconds(5), interval: .seconds(300))
        }
        let query = try ConnectivityCheck.parse(
            url: "http://[fd77::1]:8080/check?x=1#part", expectation: .status(204), timeout: .seconds(5), interval: .seconds(300))
        #expect(query.host == "fd77::1" && query.port == 8080 && query.path == "/check?x=1", "a fragment is never sent")
        for bad in ["http://", "http://host:0/", "http://host:99999/", "http://user@host/", "http://[fd77::1/",
                    "http://host/a\r\nX-Injected: 1", "http://host:https/"] {
            #expect(throws: ConnectivityCheckError.self, "\(bad)") {
                try ConnectivityCheck.parse(url: bad, expectation: .status(204), timeout: .seconds(5), interval: .seconds(300))
            }
        }
    }

    /// `http://fd00::1/` used to be taken as host `fd00:`, port 1.
    @Test func anIPv6AddressWithoutBracketsIsRefusedWithHowToWriteIt() throws {
        for url in ["http://fd00::1/", "http://fd00::1:8080/generate_204"] {
            #expect(throws: ConnectivityCheckError.self) {
                try ConnectivityCheck.parse(url: url, expectation: .status(204), timeout: .seconds(5), interval: .seconds(300))
            }
        }
        let error = try #require(throws: ConnectivityCheckError.self) { try ConnectivityCheck.target(of: "http://fd00::1/") }
        #expect(error == .unbracketedIPv6("http://fd00::1/", address: "fd00::1"))
        #expect(error.description.contains("http://[fd00::1]/PATH"), "\(error)")
    }

    @Test func expectationsAreParsedOrNamedAsWrong() throws {
        #expect(try ConnectivityCheck.parseExpectation("status:204") == .status(204))
        #expect(try ConnectivityCheck.parseExpectation("header:X-NetworkManager-Status: online")
                == .header(name: "X-NetworkManager-Status", value: "online"))
        #expect(try ConnectivityCheck.parseExpectation("body:NetworkManager is online") == .bodyPrefix("NetworkManager is online"))
        for bad in ["204", "status:abc", "status:700", "header:X", "body:"] {
            #expect(throws: ConnectivityCheckError.badExpectation(bad)) { try ConnectivityCheck.parseExpectation(bad) }
        }
    }

    @Test func responsesAreParsedWithChunkedBodies() throws {
        let plain = Array("HTTP/1.1 302 Found\r\nLocation: http://portal/login\r\nContent-Length: 0\r\n\r\n".utf8)
        let redirect = try #require(HTTPResponse(parsing: plain))
        #expect(redirect.status == 302 && redirect.header("location") == "http://portal/login")
        let chunked = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nNetworkMa\r\n5\r\nnager\r\n0\r\n\r\n".utf8)
        #expect(try #require(HTTPResponse(parsing: chunked)).bodyPrefix == Array("NetworkManager".utf8))
        #expect(HTTPResponse(parsing: Array("HTTP/1.1 200 OK\r\nServer: half".utf8)) == nil, "headers not complete")
        #expect(HTTPResponse(parsing: Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) == nil, "not HTTP")
    }

    @Test(arguments: [
        (HTTPResponse(status: 204), ConnectivityCheck.Expectation.status(204), ConnectivityVerdict(connectivity: .full, reason: .expectedAnswer)),
        (HTTPResponse(status: 302, headers: [("Location", "http://portal/login")]), .status(204),
         ConnectivityVerdict(connectivity: .portal, reason: .portalAnswer, portalURL: "http://portal/login")),
        (HTTPResponse(status: 200, bodyPrefix: Array("<html>sign in</html>".utf8)), .status(204), ConnectivityVerdict(connectivity: .portal, reason: .portalAnswer)),
        (HTTPResponse(status: 511), .status(204), ConnectivityVerdict(connectivity: .portal, reason: .portalAnswer)),
        (HTTPResponse(status: 503), .status(204), ConnectivityVerdict(connectivity: .limited, reason: .errorAnswer)),
        (HTTPResponse(status: 200, headers: [("x-networkmanager-status", "ONLINE")]), .header(name: "X-NetworkManager-Status", value: "online"),
         ConnectivityVerdict(connectivity: .full, reason: .expectedAnswer)),
        (HTTPResponse(status: 204), .header(name: "X-NetworkManager-Status", value: "online"), ConnectivityVerdict(connectivity: .portal, reason: .portalAnswer)),
        (HTTPResponse(status: 200, bodyPrefix: Array("NetworkManager is online\n".utf8)), .bodyPrefix("NetworkManager is online"),
         ConnectivityVerdict(connectivity: .full, reason: .expectedAnswer)),
        (HTTPResponse(status: 200, bodyPrefix: Array("Welcome to Hotel Wi-Fi".utf8)), .bodyPrefix("NetworkManager is online"),
         ConnectivityVerdict(connectivity: .portal, reason: .portalAnswer)),
    ] as [(HTTPResponse, ConnectivityCheck.Expectation, ConnectivityVerdict)])
    func answersAreJudgedAsAndroidAndNetworkManagerDo(response: HTTPResponse, expectation: ConnectivityCheck.Expectation, verdict: ConnectivityVerdict) {
        #expect(ConnectivityVerdict.judge(.answered(response), expecting: expectation, asked: Self.asked) == verdict)
    }

    static let asked = "http://check.example/generate_204"

    /// What a hostile portal's redirect becomes: only an absolute http(s) URL,
    /// a relative one resolved against the URL asked, nothing too long.
    @Test(arguments: [
        ("http://portal.example/login", "http://portal.example/login"),
        ("/guest/login.php", "http://check.example/guest/login.php"),
        ("login?next=%2F", "http://check.example/login?next=%2F"),
        ("file:///etc/shadow", nil), ("javascript:alert(document.cookie)", nil),
        ("http://portal.example/\u{1B}[31mred", nil),
        ("http://portal.example/" + String(repeating: "x", count: 6000), nil),
    ] as [(String, String?)])
    func aRedirectsLocationIsPublishedOnlyAsASafeAbsoluteURL(location: String, published: String?) {
        let redirect = HTTPResponse(status: 302, headers: [("Location", location)])
        #expect(ConnectivityVerdict.judge(.answered(redirect), expecting: .status(204), asked: Self.asked)
            == ConnectivityVerdict(connectivity: .portal, reason: .portalAnswer, portalURL: published))
    }

    @Test(arguments: [
        (ProbeFailure.dns, ConnectivityReason.nameUnresolved), (.refused, .refused), (.timeout, .noAnswer),
        (.unreachable, .unreachable), (.broken, .brokenAnswer),
    ])
    func noAnswerIsLimitedAndSaysWhy(failure: ProbeFailure, reason: ConnectivityReason) {
        #expect(ConnectivityVerdict.judge(.failed(failure), expecting: .status(204), asked: Self.asked)
            == ConnectivityVerdict(connectivity: .limited, reason: reason))
    }
}
