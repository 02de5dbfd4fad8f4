import Reachability

/// `[metrics]` and its flags: where the daemon offers its metrics in
/// Prometheus' text format. Both forms are off unless asked for.
struct MetricsSettings: Equatable {
    /// Prometheus' list of default port allocations gives exporters
    /// 9100–9999, which is full; later exporters take ports above 10000,
    /// and this is reachd's (to be registered with the first release that
    /// has it).
    static let defaultPort = 10077
    /// Scrapers served at once; a newcomer takes the slot of the one waiting
    /// longest without a complete request.
    static let maxScrapers = 16

    /// The HTTP listener serving `GET /metrics`; `nil`: none.
    var listen: Address?
    /// The file node_exporter's textfile collector reads, rewritten on
    /// every published change; `nil`: none.
    var textfile: String?
    /// Names a scrape's `Host` may give besides IP addresses, `localhost`
    /// and this machine's name: the listener answers others 421, so that a
    /// web page whose name was rebound to this address reads nothing.
    var hosts: [String] = []

    /// An IP address and a TCP port to listen on.
    struct Address: Equatable, CustomStringConvertible {
        var host: String
        var port: Int
        var family: AddressFamily

        var description: String { HostPort.authority(host: host, port: port, defaultPort: 0) }

        /// `yes` (loopback, the default port), `PORT` (loopback), `ADDRESS`
        /// or `ADDRESS:PORT`, an IPv6 address in brackets. An address, not a
        /// name: what a daemon binds must not hang on a resolver at boot.
        static func parse(_ text: String) throws(SettingError) -> Address {
            let text = text.trimmingSpaces()
            if text == "yes" { return Address(host: "127.0.0.1", port: defaultPort, family: .ipv4) }
            if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                guard let port = Int(text), (1...65535).contains(port) else {
                    throw SettingError("\(text) is not a port from 1 to 65535")
                }
                return Address(host: "127.0.0.1", port: port, family: .ipv4)
            }
            let parsed: HostPort
            do { parsed = try HostPort(parsing: Substring(text), as: .url) } catch {
                throw SettingError("\"\(text.escapingControlCharacters)\" is not ADDRESS[:PORT] (an IPv6 address in brackets: [::1]:\(defaultPort))")
            }
            guard let address = IPAddress(parsed.host) else {
                throw SettingError("\(parsed.host.escapingControlCharacters) is not an IP address; listen on an address, such as 127.0.0.1 or [::1]")
            }
            return Address(host: parsed.host, port: parsed.port ?? defaultPort, family: address.family)
        }
    }

    /// `[metrics] hosts`: DNS names, separated by spaces.
    static func parseHosts(_ text: String) throws(SettingError) -> [String] {
        let names = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        for name in names {
            let allowed = name.utf8.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            }
            guard allowed, !name.hasPrefix("."), !name.hasPrefix("-") else {
                throw SettingError("\"\(name.escapingControlCharacters)\" is not a host name (letters, digits, - and .), such as metrics.example.net")
            }
        }
        return names
    }

    /// A textfile path: absolute, and ending in `.prom`, the only files the
    /// textfile collector reads.
    static func checkTextfile(_ path: String) throws(SettingError) {
        guard path.hasPrefix("/"), path.hasSuffix(".prom"), !path.hasSuffix("/.prom") else {
            throw SettingError(
                "\(path.escapingControlCharacters) is not an absolute path ending in .prom "
                    + "(node_exporter reads only *.prom), such as /var/lib/prometheus/node-exporter/reachd.prom")
        }
    }
}

/// What is wrong with one setting's value, whether a flag or reachd.conf
/// said it: the caller names where.
struct SettingError: Error, Equatable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
