/// Where an app sends its packets: a host name or an address, and a TCP port.
///
/// ```swift
/// let api = try Destination(parsing: "api.example.com")          // port 443
/// let intranet = try Destination(parsing: "[fd00::10]:8443")
/// let literal = try Destination(host: "10.8.0.1", port: 22)
/// print(api, intranet, literal)   // api.example.com:443 [fd00::10]:8443 10.8.0.1:22
/// ```
public struct Destination: Sendable, Hashable, CustomStringConvertible {
    /// The longest host name DNS allows, in bytes.
    public static let maximumHostLength = 253
    /// The port when a target names none: HTTPS.
    public static let defaultPort = 443

    /// A host name (`api.example.com`) or an address literal (`fd00::10`,
    /// without brackets).
    public let host: String
    /// The TCP port, 1 to 65535.
    public let port: Int

    /// A destination, with the host and port checked.
    public init(host: String, port: Int = defaultPort) throws(DestinationError) {
        guard (1...65535).contains(port) else { throw .portOutOfRange(String(port)) }
        let address = IPAddress(host)
        if address == nil { try Self.checkName(host) }
        self.host = host
        self.port = port
        self.address = address
    }

    /// Parses a target as `reachd reach` takes it: `HOST`, `HOST:PORT`,
    /// `[IPV6]:PORT`, `[IPV6]` or an address literal (`fd00::10`, whose
    /// colons are not a port), in the grammar every host and port in reachd
    /// is read in.
    public init(parsing target: String, defaultPort: Int = defaultPort) throws(DestinationError) {
        let parsed: HostPort
        do throws(HostPort.Failure) {
            parsed = try HostPort(parsing: target[...], as: .target)
        } catch {
            switch error {
            case .emptyHost: throw .emptyHost
            case .badPort(let port): throw .portOutOfRange(port)
            case .unbracketedIPv6, .malformed: throw .malformed(target)
            }
        }
        try self.init(host: parsed.host, port: parsed.port ?? defaultPort)
    }

    /// A target as every part of reachd takes it (`reachd reach`,
    /// `wait-online --host`, the daemon's `--watch` and `[watch] targets`,
    /// a protocol request's `"target"`): an `http` or `https` URL names its
    /// server (``init(url:)``, what a user copies from a browser), anything
    /// else is ``init(parsing:defaultPort:)``'s.
    ///
    /// ```swift
    /// let fromBrowser = try Destination(target: "http://x.test/items")  // x.test:80
    /// let written = try Destination(target: "x.test")                   // x.test:443
    /// print(fromBrowser, written)
    /// ```
    public init(target: String) throws(DestinationError) {
        if target.contains("://") { try self.init(url: target) } else { try self.init(parsing: target) }
    }

    /// The server an `http` or `https` URL's requests go to: its host, and
    /// its port or the scheme's (80, 443). Read in the grammar of every URL
    /// in reachd: an IPv6 address needs its brackets.
    ///
    /// ```swift
    /// let server = try Destination(url: "https://wiki.corp.example/api/items")
    /// print(server)   // wiki.corp.example:443
    /// ```
    public init(url: String) throws(DestinationError) {
        guard let reference = URIReference(parsing: url),
            let port = ["http": 80, "https": 443][reference.scheme?.lowercased() ?? ""],
            let authority = reference.authority,
            // Credentials before the host are the request's, not the route's.
            let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last
        else { throw .notHTTPURL(url) }
        let parsed: HostPort
        do throws(HostPort.Failure) {
            parsed = try HostPort(parsing: hostAndPort, as: .url)
        } catch {
            switch error {
            case .badPort(let port): throw .portOutOfRange(port)
            case .emptyHost, .unbracketedIPv6, .malformed: throw .notHTTPURL(url)
            }
        }
        try self.init(host: parsed.host, port: parsed.port ?? port)
    }

    /// `HOST:PORT`, with an IPv6 literal in brackets.
    public var description: String {
        address?.family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The address, when the host is a literal: it needs no resolving.
    /// Parsed once: it is read at every evaluation.
    package let address: IPAddress?

    /// Letters, digits, hyphens and underscores (SRV-style labels exist) in
    /// dot-separated labels of at most 63 bytes; a trailing dot is allowed.
    private static func checkName(_ name: String) throws(DestinationError) {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw .emptyHost }
        guard bytes.count <= maximumHostLength else { throw .hostTooLong(bytes.count) }
        let labels = (bytes.last == UInt8(ascii: ".") ? bytes.dropLast() : bytes[...])
            .split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        for label in labels {
            guard (1...63).contains(label.count), label.allSatisfy(isNameByte) else { throw .malformed(name) }
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}

/// Why a target is not a destination; the description says what to write instead.
public enum DestinationError: Error, Sendable, Hashable, CustomStringConvertible {
    case emptyHost
    /// The name has this many bytes, more than ``Destination/maximumHostLength``.
    case hostTooLong(Int)
    /// The port as written.
    case portOutOfRange(String)
    /// The target as written.
    case malformed(String)
    /// The URL as written (``Destination/init(url:)``).
    case notHTTPURL(String)

    public var description: String {
        switch self {
        case .emptyHost:
            "the host is empty; write HOST, HOST:PORT or [IPV6]:PORT"
        case .hostTooLong(let length):
            "the host name has \(length) bytes; DNS allows at most \(Destination.maximumHostLength)"
        case .portOutOfRange(let port):
            "port \"\(port.escapingControlCharacters)\" is not a number from 1 to 65535"
        case .malformed(let target):
            "\"\(target.escapingControlCharacters)\" is not HOST, HOST:PORT, [IPV6]:PORT or an address"
        case .notHTTPURL(let url):
            "\"\(url.escapingControlCharacters)\" is not an http or https URL with a host; "
                + "write http://HOST[:PORT]/PATH, with an IPv6 address in brackets"
        }
    }
}
