import Reachability

/// What the connectivity check asks and what it accepts as "online": the
/// configuration behind `connectivity`.
///
/// Plain HTTP only, as NetworkManager, Android and Apple probe: a captive
/// portal can intercept plain HTTP and answer in its own name, which is
/// exactly what the check looks for; with HTTPS it could only break the
/// connection.
struct ConnectivityCheck: Equatable, Sendable {
    /// What counts as the expected answer.
    enum Expectation: Equatable, Sendable {
        /// This status code (Android's generate_204: 204).
        case status(Int)
        /// This header with this value, case-insensitively
        /// (NetworkManager's `X-NetworkManager-Status: online`).
        case header(name: String, value: String)
        /// A 200 whose body starts with this text (NetworkManager's
        /// "NetworkManager is online", Apple's "Success").
        case bodyPrefix(String)
    }

    var host: String
    var port: Int
    /// The request target, from the first "/" on.
    var path: String
    var expectation: Expectation
    var timeout: Duration
    /// How long a `full` result stands before the next check of the same path.
    var interval: Duration

    /// Parses `http://host[:port]/path`. `nil` with a reason otherwise.
    static func parse(
        url: String, expectation: Expectation, timeout: Duration, interval: Duration
    ) throws(ConnectivityCheckError) -> ConnectivityCheck {
        let (host, port, path) = try target(of: url)
        return ConnectivityCheck(host: host, port: port, path: path, expectation: expectation, timeout: timeout, interval: interval)
    }

    /// The host, port and request target of `http://host[:port]/path`, or
    /// why it is not one. Split as every URL in reachd is (``URIReference``,
    /// ``HostPort``): an IPv6 address needs its brackets, as a browser needs
    /// them, and a control character makes it no URL.
    static func target(of url: String) throws(ConnectivityCheckError) -> (host: String, port: Int, path: String) {
        guard url.lowercased().hasPrefix("http://") else { throw .notPlainHTTP(url) }
        guard let reference = URIReference(parsing: url), let authority = reference.authority,
            !authority.contains("@")
        else { throw .malformed(url) }
        let parsed: HostPort
        do throws(HostPort.Failure) {
            parsed = try HostPort(parsing: authority[...], as: .url)
        } catch {
            switch error {
            case .unbracketedIPv6(let address): throw .unbracketedIPv6(url, address: address)
            case .emptyHost, .badPort, .malformed: throw .malformed(url)
            }
        }
        // The request target: the path and query; a fragment is never sent.
        let path = (reference.path.isEmpty ? "/" : reference.path) + (reference.query.map { "?" + $0 } ?? "")
        return (parsed.host, parsed.port ?? 80, path)
    }

    /// Parses `--check-expect`: `status:204`, `header:NAME: VALUE` or `body:TEXT`.
    static func parseExpectation(_ text: String) throws(ConnectivityCheckError) -> Expectation {
        if text.hasPrefix("status:"), let code = Int(text.dropFirst("status:".count)), (100...599).contains(code) {
            return .status(code)
        }
        if text.hasPrefix("header:") {
            let header = text.dropFirst("header:".count)
            if let colon = header.firstIndex(of: ":") {
                let name = header[..<colon].trimmingSpaces()
                let value = header[header.index(after: colon)...].trimmingSpaces()
                if !name.isEmpty && !value.isEmpty { return .header(name: name, value: value) }
            }
        }
        if text.hasPrefix("body:"), text.count > "body:".count {
            return .bodyPrefix(String(text.dropFirst("body:".count)))
        }
        throw .badExpectation(text)
    }

    /// `host[:port]` as a URL and the Host header write it: an IPv6 literal in
    /// brackets, the port only when it is not 80.
    var authority: String { HostPort.authority(host: host, port: port, defaultPort: 80) }

    /// The URL asked, for the log.
    var url: String { "http://\(authority)\(path)" }

    /// The request, `Connection: close`, nothing cached.
    var request: [UInt8] {
        return Array("""
            GET \(path) HTTP/1.1\r
            Host: \(authority)\r
            User-Agent: reachd/\(ReachdVersion.current) connectivity check\r
            Accept: */*\r
            Cache-Control: no-cache\r
            Connection: close\r
            \r\n
            """.utf8)
    }
}

/// A check configuration that cannot work, named with what to write instead.
enum ConnectivityCheckError: Error, Equatable, CustomStringConvertible {
    case notPlainHTTP(String)
    case malformed(String)
    /// The URL, and the IPv6 address it has without brackets.
    case unbracketedIPv6(String, address: String)
    case badExpectation(String)

    var description: String {
        switch self {
        case .notPlainHTTP(let url):
            "check URL \"\(url)\" is not plain HTTP: a captive portal can only answer http:// requests; use http://HOST[:PORT]/PATH"
        case .malformed(let url):
            "check URL \"\(url)\" is not http://HOST[:PORT]/PATH"
        case .unbracketedIPv6(let url, let address):
            "check URL \"\(url)\" has the IPv6 address \(address) without brackets, which a URL needs to tell its "
                + "colons from a port's; write http://[\(address)]/PATH, or http://[\(address)]:PORT/PATH"
        case .badExpectation(let text):
            "check expectation \"\(text)\" is not status:CODE, header:NAME: VALUE or body:TEXT"
        }
    }
}
