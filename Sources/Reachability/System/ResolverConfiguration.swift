/// The name servers a resolver configuration (`resolv.conf(5)`) names.
///
/// Only the first three count: glibc's resolver asks no more (`MAXNS`).
/// An address with a zone (`fe80::1%eth0`) keeps it: it is asked on that link.
package struct ResolverConfiguration: Equatable, Sendable {
    /// glibc's `MAXNS`.
    package static let serversAsked = 3
    /// systemd-resolved's stub listeners: the real servers are resolved's.
    package static let resolvedStubs: Set<String> = ["127.0.0.53", "127.0.0.54"]
    /// Where systemd-resolved writes the servers it uses.
    package static let resolvedServersFile = "/run/systemd/resolve/resolv.conf"

    package var servers: [NameServer]

    package init(servers: [NameServer]) {
        self.servers = servers
    }

    /// The `nameserver` lines of `text`, in order; anything else, and what
    /// does not parse, is skipped, as the resolver skips it.
    /// `limit`: how many count (glibc asks three; systemd-resolved all of
    /// those it lists).
    package init(parsing text: String, limit: Int = serversAsked) {
        var servers: [NameServer] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver", servers.count < limit else { continue }
            if let parsed = NameServer(words[1]) { servers.append(parsed) }
        }
        self.servers = servers
    }

    /// The servers the host's resolver asks now: `/etc/resolv.conf`'s, or,
    /// where it points at systemd-resolved's stub, resolved's own servers:
    /// none when it knows none (it writes the file with no `nameserver`
    /// line), the stub itself when the file can't be read. No file: no
    /// server (glibc would ask 127.0.0.1; reachd says `none`).
    package static func current(
        etc: String = "/etc/resolv.conf", resolved: String = resolvedServersFile
    ) -> ResolverConfiguration {
        let configured = ResolverConfiguration(parsing: SmallFile.read(etc) ?? "")
        guard configured.pointsAtResolvedStub, let text = SmallFile.read(resolved) else { return configured }
        return ResolverConfiguration(parsing: text, limit: .max)
    }

    /// Whether every server is systemd-resolved's stub: then the servers
    /// that answer are in ``resolvedServersFile``.
    package var pointsAtResolvedStub: Bool {
        !servers.isEmpty && servers.allSatisfy { Self.resolvedStubs.contains($0.address.description) }
    }
}
