import Testing
@testable import Reachability

/// What a captive portal's `Location` may become as `portal_url`.
@Suite("Portal URLs from hostile portals")
struct PortalURLTests {
    /// RFC 3986 section 5.4, normal and abnormal examples, from its base
    /// `http://a/b/c/d;p?q`. Those with another scheme (`g:h`) resolve, and are
    /// then refused as not http(s): they are in `refusedAfterResolving`.
    static let rfcExamples: [(String, String)] = [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"),
        ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"), (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"), ("", "http://a/b/c/d;p?q"),
        (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"),
        ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"), ("../../g", "http://a/g"),
        // Abnormal examples.
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"),
        ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"), ("g#s/./x", "http://a/b/c/g#s/./x"),
        ("g#s/../x", "http://a/b/c/g#s/../x"),
    ]

    @Test(arguments: rfcExamples)
    func relativeReferencesResolveAsRFC3986Says(reference: String, target: String) {
        #expect(PortalURL.resolve(reference, against: "http://a/b/c/d;p?q") == target)
    }

    @Test func aRelativeLocationResolvesAgainstTheCheckURL() {
        #expect(PortalURL.resolve("/guest/login.php", against: "http://check.example:8080/generate_204")
            == "http://check.example:8080/guest/login.php")
        #expect(PortalURL.resolve("HTTPS://Portal.example/login", against: "http://check.example/")
            == "https://Portal.example/login", "the scheme is case-insensitive, and written in lower case")
    }

    /// `http:g` resolves to a URL without a host, which can't be opened.
    @Test(arguments: [
        "file:///etc/shadow", "javascript:alert(1)", "data:text/html,<script>", "ftp://portal.example/",
        "g:h", "http:g", "mailto:x@example.com", "http://user:pass@bank.example/", "http://bank.example@evil.example/",
        "http:///no-host", "http://:8080/login", "http://x/\u{1B}[31mred", "http://x/a\nSet-Cookie: x", "http://x/\u{9B}31m", "http://x/\u{7F}",
    ])
    func onlyAbsoluteHTTPURLsWithAHostArePublished(location: String) {
        #expect(PortalURL.resolve(location, against: "http://check.example/generate_204") == nil)
        #expect(PortalURL.validated(location) == nil)
    }

    @Test func aLongLocationIsNoURL() {
        let long = "http://portal.example/" + String(repeating: "a", count: 6000)
        #expect(PortalURL.resolve(long, against: "http://check.example/") == nil)
        let limit = "http://portal.example/" + String(repeating: "a", count: PortalURL.maximumLength - 22)
        #expect(PortalURL.resolve(limit, against: "http://check.example/") == limit, "2048 bytes is still a URL")
        #expect(PortalURL.resolve(limit + "a", against: "http://check.example/") == nil)
    }

    @Test func bytesAURIMayNotHoldArePercentEncoded() {
        #expect(PortalURL.validated("http://portal.example/login?ssid=Café Wi-Fi&x=\"<y>\"")
            == "http://portal.example/login?ssid=Caf%C3%A9%20Wi-Fi&x=%22%3Cy%3E%22")
        #expect(PortalURL.validated("http://portal.example/\u{202E}gpj.exe") == "http://portal.example/%E2%80%AEgpj.exe")
    }

    @Test func aClientDropsADaemonsPortalURLThatIsNoURL() throws {
        var portal = ProtocolTests.sample
        portal.connectivity = .portal
        portal.portalURL = "javascript:alert(1)"
        guard case .status(let status) = try DaemonMessage.decode(DaemonMessage.status(portal).line().dropLast()) else {
            Issue.record("not a status")
            return
        }
        #expect(status.portalURL == nil)
    }
}

/// Escaping what comes from outside before a terminal or the log sees it.
@Suite("Escaping control characters")
struct ControlCharacterEscapingTests {
    @Test(arguments: [
        ("plain text, é and 日本", "plain text, é and 日本"),
        ("\u{1B}[31mred\u{1B}[0m", "\\x1b[31mred\\x1b[0m"),
        ("line\nforged: entry\r\t", "line\\nforged: entry\\r\\t"),
        ("\u{7F}\u{0}", "\\x7f\\x00"),
        ("\u{9B}31m", "\\xc2\\x9b31m"),
        ("\u{202E}evil\u{2066}", "\\u{202e}evil\\u{2066}"),
        ("a\\x1b stays", "a\\x1b stays"),
    ])
    func controlsAreWrittenVisibly(text: String, escaped: String) {
        #expect(text.escapingControlCharacters == escaped)
        #expect(text.escapingControlCharacters.escapingControlCharacters == escaped, "idempotent")
    }

    @Test func noEscapedTextHoldsAControlCharacter() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let scalars = (0..<40).compactMap { _ in Unicode.Scalar(UInt32.random(in: 0...0x2100, using: &generator)) }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            let escaped = text.escapingControlCharacters
            #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(Array(text.unicodeScalars))")
        }
    }

    /// The byte check escaping starts with finds exactly the scalars the
    /// scalar rule escapes: every scalar of the Basic Multilingual Plane,
    /// and a sample above it, between two letters.
    @Test func theByteCheckFindsWhatTheScalarRuleEscapes() {
        let values = Array(0...0xFFFF) + Array(stride(from: 0x10000, through: 0x10FFFF, by: 97))
        var disagreements: [UInt32] = []
        for value in values {
            guard let scalar = Unicode.Scalar(UInt32(value)) else { continue }
            var text = "a"
            text.unicodeScalars.append(scalar)
            text += "b"
            let absent = text.utf8.withContiguousStorageIfAvailable { ControlCharacters.absent(from: $0) }
            if absent != !scalar.needsEscaping { disagreements.append(scalar.value) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10).map { String($0, radix: 16) })")
        let lines = Array("one\ntwo".utf8)
        #expect(lines.withUnsafeBufferPointer { ControlCharacters.absent(from: $0, newlines: true) })
        #expect(!lines.withUnsafeBufferPointer { ControlCharacters.absent(from: $0) })
    }

    /// The check reads printable ASCII eight bytes at a time: a scalar it
    /// must find is found at every offset of a longer text, each byte of
    /// it in any lane, and text with none passes whole.
    @Test func theByteCheckFindsAControlCharacterAtAnyOffset() {
        let escaped: [[UInt8]] = (0..<0x20).map { [UInt8($0)] } + [[0x7F], [0xC2, 0x80], [0xC2, 0x9F], [0xE2, 0x80, 0xA8],
                                                                 [0xE2, 0x80, 0xAE], [0xE2, 0x81, 0xA6], [0xE2, 0x81, 0xA9]]
        let passed: [[UInt8]] = [[0x20], [0x7E], [0xC2, 0xA0], [0xE2, 0x80, 0xA7], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80]]
        for offset in 0..<20 {
            for (sequence, found) in escaped.map({ ($0, true) }) + passed.map({ ($0, false) }) {
                let text = [UInt8](repeating: UInt8(ascii: "a"), count: offset) + sequence + [UInt8](repeating: UInt8(ascii: "b"), count: 19)
                let absent = text.withUnsafeBufferPointer { ControlCharacters.absent(from: $0) }
                #expect(absent == !found, "\(sequence) at \(offset)")
            }
            let line = [UInt8](repeating: UInt8(ascii: "a"), count: offset) + [UInt8(ascii: "\n")] + [UInt8](repeating: UInt8(ascii: "b"), count: 19)
            #expect(line.withUnsafeBufferPointer { ControlCharacters.absent(from: $0, newlines: true) }, "newline at \(offset)")
            #expect(!line.withUnsafeBufferPointer { ControlCharacters.absent(from: $0) }, "newline at \(offset)")
        }
    }
}
