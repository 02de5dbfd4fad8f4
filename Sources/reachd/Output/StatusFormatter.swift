#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Reachability

/// The human and JSON renderings of a status, shared by the subcommands so that
/// `status`, `monitor` and the daemon's log say the same thing the same way.
///
/// Every line of human text has its control characters escaped here, newlines
/// included: a status may come from any program on the socket, and a field
/// holding "\n" must not make a line of its own.
enum StatusFormatter {
    static func jsonLine(_ status: NetworkStatus) -> String {
        String(decoding: DaemonMessage.status(status).line(), as: UTF8.self)
    }

    /// `networkctl status`-like: a summary, the families, then a line per interface.
    static func summary(_ status: NetworkStatus) -> String {
        var lines = [
            "State: \(state(status))" + (status.primary.map { " \(status.online ? "via" : "routed via") \(describe($0))" } ?? ""),
            "  IPv4: \(familyLine(status.ipv4))",
            "  IPv6: \(familyLine(status.ipv6))",
            "Connectivity: \(status.connectivity.rawValue)" + (status.connectivityReason.map { " (\($0))" } ?? "")
                + (status.portalURL.map { ", sign in at \($0)" } ?? ""),
            "DNS: \(describe(status.dns))",
            "Source: \(status.source.rawValue), seq \(status.seq), changed \(Timestamp.format(status.changedAt))",
            "",
        ].map(\.escapingControlCharacters)
        let rows = [["IDX", "LINK", "ADMIN", "CARRIER", "OPER", "ADDRESSES"]] + status.interfaces.map { link in
            [String]([
                "\(link.index)", link.name, link.up ? "up" : "down", link.carrier ? "yes" : "no",
                link.operstate,
                (link.addresses.map { "\($0.address)/\($0.prefix)" } + (link.loopback ? ["(loopback)"] : [])
                    + (link.metered.isMetered ? ["(metered\(link.metered == .guessed ? ", guessed" : ""))"] : []))
                    .joined(separator: " "),
            ]).map(\.escapingControlCharacters)
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                column == 0 ? String(repeating: " ", count: widths[0] - cell.count) + cell
                    : column < 5 ? cell.padding(toLength: widths[column]) : cell
            }
            lines.append(cells.joined(separator: "  ").trimmingTrailingSpaces())
        }
        if !status.watched.isEmpty {
            // The daemon's verdicts, as its own uid: an app's may differ.
            lines += ["", "Watched (by the daemon, as its own user):"] + status.watched.map { "  " + destination($0) }
        }
        return lines.joined(separator: "\n")
    }

    /// One interface as JSON, as it appears in the status's `interfaces`.
    static func jsonLine(_ link: InterfaceStatus) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(link)) ?? Data(), as: UTF8.self)
    }

    /// `networkctl status IFACE`-like: one link, and the routes out through it.
    static func interface(_ link: InterfaceStatus, in status: NetworkStatus) -> String {
        let routes = AddressFamily.allCases.compactMap { family -> String? in
            guard let path = status.family(family).path, path.index == link.index else { return nil }
            return "\(family) " + (path.gateway.map { "via gateway \($0)" } ?? "on-link")
                + (status.primary == path ? " (primary)" : "")
        }
        let addresses = link.addresses.map { "\($0.address)/\($0.prefix)" }
        let rows: [(String, [String])] = [
            ("Admin", [link.up ? "up" : "down"]),
            ("Carrier", [link.carrier ? "yes" : "no"]),
            ("Oper. state", [link.operstate]),
            ("Metered", [link.metered.rawValue]),
            ("Addresses", addresses.isEmpty ? ["none"] : addresses),
            ("Routes out", routes.isEmpty ? ["none"] : routes),
        ]
        var lines = ["● \(link.index): \(link.name.escapingControlCharacters)" + (link.loopback ? " (loopback)" : "")]
        for (label, values) in rows {
            for (number, value) in values.enumerated() {
                let head = number == 0 ? label + ":" : ""
                lines.append(String(repeating: " ", count: 13 - head.count) + head + " " + value.escapingControlCharacters)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// One line per status, for `monitor` and the daemon's log: the state,
    /// then what changed (``NetworkStatus/changes``), so that two lines never
    /// look alike. `timed`: led by the time of the change (the log has its own).
    static func changeLine(_ status: NetworkStatus, timed: Bool = true, at time: Date? = nil) -> String {
        // One string appended to and escaped once: built of interpolations
        // and joins, with the state escaped on its own first, it was 25k
        // instructions per change in the daemon's log (callgrind).
        var line = ""
        line.reserveCapacity(256)
        if timed {
            line += Timestamp.format(time ?? status.changedAt)
            line += " "
        }
        line += "#"
        line += String(status.seq)
        line += " "
        appendState(of: status, to: &line)
        for (position, change) in status.changes.enumerated() {
            line += position == 0 ? " | " : "; "
            line += describe(change, in: status)
        }
        return line.escapingControlCharacters
    }

    /// One change in words: "IPv4 path: eth0 via 10.0.0.1 → tun0", "IPv4
    /// online → local (no_route)", "connectivity full → limited (connections
    /// through this path fail)", "eth0: up,
    /// no carrier, 192.0.2.11/24", "-eth1". A link is shown as it is now, so
    /// that adding an address and removing it read differently.
    static func describe(_ change: StatusChange, in status: NetworkStatus) -> String {
        switch change {
        case .path(let family, let from, let to):
            let (before, after) = (from.map(short) ?? "none", to.map(short) ?? "none")
            guard before == after, let from, let to else { return "\(family) path: \(before) → \(after)" }
            // Only the source address moved (a renumbering): say that.
            return "\(family) path: \(before) from \(from.source ?? "?") → \(to.source ?? "?")"
        case .reachability(let family, let from, let to):
            let reason = status.family(family).reason.map { " (\($0))" } ?? ""
            return from == to ? "\(family) \(to.rawValue)\(reason)" : "\(family) \(from.rawValue) → \(to.rawValue)\(reason)"
        case .connectivity(let from, let to):
            let reason = status.connectivityReason.map { " (\($0))" } ?? ""
            return from == to ? "connectivity \(to.rawValue)\(reason)" : "connectivity \(from.rawValue) → \(to.rawValue)\(reason)"
        case .dns(let from, let to):
            return from == to ? "dns \(to.rawValue): \(servers(status.dns))" : "dns \(from.rawValue) → \(to.rawValue)"
        case .portalURL:
            return status.portalURL.map { "portal \($0)" } ?? "no portal URL"
        case .metered(let from, let to):
            return "metered \(from ? "yes" : "no") → \(to ? "yes" : "no")"
        case .interfaces(let links, let more):
            return (links.map { name in
                guard let link = status.interfaces.first(where: { $0.name == name }) else { return "-\(name)" }
                let addresses = link.addresses.map { "\($0.address)/\($0.prefix)" }
                return "\(name): " + ([link.up ? "up" : "down", link.carrier ? "carrier" : "no carrier"]
                    + (link.metered == .no ? [] : ["metered \(link.metered.rawValue)"])
                    + (addresses.isEmpty ? ["no addresses"] : addresses)).joined(separator: ", ")
            } + (more > 0 ? ["\(more) more"] : [])).joined(separator: "; ")
        case .watched(let target, let from, let to):
            guard let answer = status.watched.first(where: { $0.target == target }) else { return "\(target) \(to)" }
            guard let from, from != to else { return destination(answer) }
            return "\(target) \(from) → \(to)" + (answer.reason.map { " (\($0))" } ?? "")
        case .unrecognized(let kind):
            return "\(kind) changed"
        }
    }

    /// "ok (192.0.2.53 via eth0, 10.8.0.1 unreachable (no route))": the
    /// verdict, then each server and its route.
    static func describe(_ dns: DNSStatus) -> String {
        dns.state.rawValue.escapingControlCharacters + (dns.servers.isEmpty ? "" : " (\(servers(dns)))")
    }

    /// "192.0.2.53 via eth0, 10.8.0.1 unreachable (no route)": each server and its route.
    private static func servers(_ dns: DNSStatus) -> String {
        dns.servers.map { server in
            server.address + (server.interface.map { " via \($0)" } ?? " \(server.state)" + (server.reason.map { " (\($0))" } ?? ""))
        }.joined(separator: ", ")
    }

    /// "eth0 via 10.0.0.1", or "tun0" on-link: a path in a change.
    private static func short(_ path: NetworkPath) -> String {
        path.interface + (path.gateway.map { " via \($0)" } ?? "")
    }

    /// The state in one line, as systemd shows it (STATUS=, `systemctl status`).
    static func oneLine(_ status: NetworkStatus) -> String {
        var line = ""
        appendState(of: status, to: &line)
        return line.escapingControlCharacters
    }

    /// ``oneLine(_:)`` before it is escaped, at the end of `line`.
    private static func appendState(of status: NetworkStatus, to line: inout String) {
        line += state(status)
        line += " ipv4="
        line += status.ipv4.reachability.rawValue
        line += " ipv6="
        line += status.ipv6.reachability.rawValue
        if let primary = status.primary {
            line += " via "
            line += describe(primary)
            if status.metered { line += " (metered)" }
        }
        // Only when a check runs: what it found, and where a portal sends the user.
        if status.connectivity != .unknown {
            line += " connectivity="
            line += status.connectivity.rawValue
        }
        if let portal = status.portalURL {
            line += " portal="
            line += portal
        }
    }

    /// The word a status leads with: what ``NetworkStatus/online`` says,
    /// which the exit codes follow. Where the routes are online but the
    /// check found otherwise, what it found ("portal", "limited"): never
    /// "online" for a status that is not.
    static func state(_ status: NetworkStatus) -> String {
        if status.online { return "online" }
        guard status.reachability == .online else { return status.reachability.rawValue }
        switch status.connectivity {
        case .portal, .limited, .none: return status.connectivity.rawValue
        // A newer daemon's verdict, or its word against a level this
        // version does not know: not online, in the daemon's own word.
        case .full, .unknown, .unrecognized: return "not online"
        }
    }

    private static func familyLine(_ family: FamilyStatus) -> String {
        if let path = family.path { return "\(family.reachability.rawValue) via \(describe(path))" }
        return family.reachability.rawValue + (family.reason.map { " (\($0))" } ?? "")
    }

    /// "eth0, gateway 192.0.2.1", or "wg0 (on-link)".
    static func describe(_ path: NetworkPath) -> String {
        (path.interface + (path.gateway.map { ", gateway \($0)" } ?? " (on-link)")).escapingControlCharacters
    }

    /// `api.example.com:443 reachable via wg0 (table 51820), gateway 10.8.0.1`.
    static func destination(_ status: DestinationStatus) -> String {
        let target = status.target.escapingControlCharacters
        guard let via = status.via, status.isReachable else {
            let reason = status.reason.map { ": \($0)" } ?? ""
            return "\(target) \(status.state)\(reason)"
        }
        var text = "\(target) reachable via \(via.interface.escapingControlCharacters)"
        switch via.table {
        case mainTable: break
        case localTable: text += " (table local)"
        default: text += " (table \(via.table))"
        }
        if let gateway = via.gateway { text += ", gateway \(gateway.escapingControlCharacters)" }
        if status.addresses.count > 1 { text += " (\(status.addresses.filter(\.isReachable).count) of \(status.addresses.count) addresses)" }
        return text
    }

    /// RT_TABLE_MAIN, not worth naming, and RT_TABLE_LOCAL, named as `ip` does.
    private static let mainTable: UInt32 = 254
    private static let localTable: UInt32 = 255
}

extension String {
    fileprivate func padding(toLength width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    fileprivate func trimmingTrailingSpaces() -> String {
        String(self[..<(lastIndex { $0 != " " }.map { index(after: $0) } ?? startIndex)])
    }
}
