/// `HOST[:PORT]`, the one grammar reachd reads a host and a port in: a
/// destination (`reachd reach api.example.com:8443`), the authority of the
/// connectivity check's URL, and the authority of a portal's URL. It is RFC
/// 3986's authority (sections 3.2.2 and 3.2.3): a name or an IPv4 address,
/// or an IPv6 address in brackets, and a port in decimal.
///
/// A command-line target may also be a bare IPv6 address (`fd00::10`), as
/// `ip` and `ping` take one: then its colons are not a port. A URL may not:
/// `http://fd00::1/` has no reading a browser and reachd would agree on.
package struct HostPort: Hashable, Sendable {
    /// Where the text comes from, which decides the two cases RFC 3986 and
    /// a command line differ on.
    package enum Grammar: Sendable {
        /// A command-line target: a bare IPv6 address is an address, and a
        /// colon promises a port.
        case target
        /// A URL's authority: an IPv6 address needs its brackets, and an
        /// empty port (`host:`) is no port, as RFC 3986 allows.
        case url
    }

    /// What is wrong with the text.
    package enum Failure: Error, Equatable {
        case emptyHost
        /// The port as written: not a number from 1 to 65535.
        case badPort(String)
        /// An IPv6 address without brackets where brackets are needed; the address.
        case unbracketedIPv6(String)
        case malformed
    }

    /// The host without brackets: a name, or an address as written.
    package var host: String
    /// The port, when one is written.
    package var port: Int?

    package init(parsing text: Substring, as grammar: Grammar) throws(Failure) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .malformed }
            let inside = text[text.index(after: text.startIndex)..<close]
            guard IPAddress(String(inside))?.family == .ipv6 else { throw .malformed }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { throw .malformed }
            self.init(host: String(inside), port: rest.isEmpty ? nil : try Self.port(rest.dropFirst(), grammar))
            return
        }
        let colons = text.filter { $0 == ":" }.count
        if colons > 1 {
            // Only an IPv6 address has several colons.
            guard IPAddress(String(text))?.family == .ipv6 else { throw .malformed }
            switch grammar {
            case .target: self.init(host: String(text), port: nil)
            case .url: throw .unbracketedIPv6(String(text))
            }
            return
        }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard !parts[0].isEmpty else { throw .emptyHost }
        let port = parts.count == 2 ? try Self.port(parts[1], grammar) : nil
        self.init(host: String(parts[0]), port: port)
    }

    private init(host: String, port: Int?) {
        self.host = host
        self.port = port
    }

    /// The digits after a colon: none is no port in a URL, and an error in
    /// a target, which promised one.
    private static func port(_ text: Substring, _ grammar: Grammar) throws(Failure) -> Int? {
        if text.isEmpty, grammar == .url { return nil }
        guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let port = Int(text),
            (1...65535).contains(port)
        else { throw .badPort(String(text)) }
        return port
    }

    /// `host[:port]` as a URL and a Host header write it: an IPv6 address in
    /// brackets, the port unless it is `defaultPort`.
    package static func authority(host: String, port: Int, defaultPort: Int) -> String {
        (host.contains(":") ? "[\(host)]" : host) + (port == defaultPort ? "" : ":\(port)")
    }
}
