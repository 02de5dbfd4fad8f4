import Reachability

/// One structured journal entry about a published change: a family going
/// online or not, a handover to another path, the connectivity check's new
/// verdict, a watched target's new state, or anything else a status says
/// changed. Each kind has its own `MESSAGE_ID` (a catalog ID, as systemd's
/// own services have), so that the history is a query:
///
/// ```sh
/// journalctl MESSAGE_ID=0b48f89eacaa4316b01d3b13b6e716f6 REACHD_FAMILY=ipv4 --since yesterday \
///   -o verbose --output-fields=REACHD_REACHABILITY,REACHD_REASON
/// ```
///
/// Fields hold the protocol's words (docs/PROTOCOL.md), so a query matches
/// what `reachd status --json` says. Entries render the status's
/// ``NetworkStatus/changes``: they compare nothing themselves.
struct JournalEntry {
    /// What changed: one `MESSAGE_ID` per kind, never reused for another.
    enum Kind: String, CaseIterable {
        case family = "0b48f89eacaa4316b01d3b13b6e716f6"
        case path = "4d2fac482b314ecdbe3b97538f1663c9"
        case connectivity = "882f406292b345458c16703deead3d9f"
        case destination = "0fcb124ef37a4a6bbecca317f6c28059"
        /// Name resolution's verdict, or the servers behind it, moved.
        case dns = "573588866fdd4e26a2f9861d66176725"
        /// Links, metering, a watched target's path: what the other kinds
        /// leave out, so that under journald no change goes unrecorded.
        case other = "0e1dcea3b108486ab8f29edfa41b08a3"

        var messageID: String { rawValue }
    }

    var kind: Kind
    var message: String
    /// syslog(3): 5 (notice) for a loss, 6 (info) otherwise.
    var priority: Int
    /// `REACHD_*` fields, in order; no value is empty.
    var fields: [(name: String, value: String)]

    /// The entries for `status`. The daemon's first status (`first`) says
    /// where it started from: one entry per family, the verdict once a check
    /// gave one, name resolution's once judged, each watched target once
    /// resolved. Every later one has one entry per change it carries; a
    /// family's path coming or going is its reachability's entry, a path
    /// that moved while the family stayed online is a handover's (``Kind/path``).
    static func entries(for status: NetworkStatus, first: Bool) -> [JournalEntry] {
        let common = [("REACHD_ONLINE", status.online ? "1" : "0"), ("REACHD_SEQ", "\(status.seq)")]
        guard !first else {
            return [AddressFamily.ipv4, .ipv6].map { family(status, $0, was: nil, common) }
                + (status.connectivity == .unknown ? [] : [connectivity(status, was: nil, common)])
                + (status.dns.state == .unknown ? [] : [dns(status, was: nil, common)])
                + status.watched.filter { $0.state != .pending }.map { destination($0, was: nil, status) }
        }
        var entries: [JournalEntry] = []
        for change in status.changes {
            switch change {
            case .reachability(let name, let from, _):
                entries.append(family(status, name, was: from, common))
            case .path(let family, let from?, let to?):
                entries.append(handover(family, from: from, to: to, status, common))
            case .path:
                break
            case .connectivity(let from, _):
                entries.append(connectivity(status, was: from, common))
            case .portalURL:
                // The verdict's entry gives the URL when the verdict changed too.
                if !status.changes.contains(where: { if case .connectivity = $0 { true } else { false } }) {
                    entries.append(connectivity(status, was: status.connectivity, common))
                }
            case .watched(let target, let from, let to) where to != .pending && from != to:
                if let answer = status.watched.first(where: { $0.target == target }) {
                    entries.append(destination(answer, was: from == .pending ? nil : from, status))
                }
            case .dns(let from, let to):
                entries.append(dns(status, was: from == to ? nil : from, common))
            case .watched, .metered, .interfaces, .unrecognized:
                entries.append(JournalEntry(
                    kind: .other, message: StatusFormatter.describe(change, in: status), priority: 6,
                    fields: [("REACHD_CHANGE", change.kind)] + common))
            }
        }
        return entries
    }

    private static func family(
        _ status: NetworkStatus, _ family: AddressFamily, was before: ReachabilityLevel?, _ common: [(String, String)]
    ) -> JournalEntry {
        let now = status.family(family)
        var fields = [("REACHD_FAMILY", family.rawValue), ("REACHD_REACHABILITY", now.reachability.rawValue)]
        if let before { fields.append(("REACHD_PREVIOUS_REACHABILITY", before.rawValue)) }
        if let reason = now.reason { fields.append(("REACHD_REASON", reason.rawValue)) }
        if let path = now.path { fields += pathFields(path, prefix: "REACHD_") }
        let name = family == .ipv4 ? "IPv4" : "IPv6"
        let message = "\(name) \(now.reachability.rawValue)"
            + (now.reason.map { ": \($0.rawValue)" } ?? now.path.map { " via \($0.interface)" } ?? "")
            + (before.map { " (was \($0.rawValue))" } ?? "")
        return JournalEntry(
            kind: .family, message: message, priority: now.reachability == .online ? 6 : 5, fields: fields + common)
    }

    /// A handover: online before and after, on another path.
    private static func handover(
        _ family: AddressFamily, from: NetworkPath, to: NetworkPath, _ status: NetworkStatus, _ common: [(String, String)]
    ) -> JournalEntry {
        let fields = [("REACHD_FAMILY", family.rawValue)] + pathFields(to, prefix: "REACHD_")
            + pathFields(from, prefix: "REACHD_PREVIOUS_")
        return JournalEntry(
            kind: .path, message: StatusFormatter.describe(.path(family, from: from, to: to), in: status), priority: 6,
            fields: fields + common)
    }

    private static func pathFields(_ path: NetworkPath, prefix: String) -> [(String, String)] {
        [(prefix + "INTERFACE", path.interface)] + (path.gateway.map { [(prefix + "GATEWAY", $0)] } ?? [])
            + (path.source.map { [(prefix + "SOURCE", $0)] } ?? [])
    }

    private static func connectivity(_ status: NetworkStatus, was before: Connectivity?, _ common: [(String, String)]) -> JournalEntry {
        var fields = [("REACHD_CONNECTIVITY", status.connectivity.rawValue)]
        if let before { fields.append(("REACHD_PREVIOUS_CONNECTIVITY", before.rawValue)) }
        if let portal = status.portalURL { fields.append(("REACHD_PORTAL_URL", portal)) }
        if let reason = status.connectivityReason { fields.append(("REACHD_CONNECTIVITY_REASON", reason.rawValue)) }
        let message = "connectivity \(status.connectivity.rawValue)"
            + (status.connectivityReason.map { ": \($0)" } ?? "")
            + (status.portalURL.map { ", sign in at \($0)" } ?? "")
            + (before.map { " (was \($0.rawValue))" } ?? "")
        return JournalEntry(
            kind: .connectivity, message: message,
            priority: status.connectivity == .full || status.connectivity == .unknown ? 6 : 5, fields: fields + common)
    }

    /// Name resolution: its state, the one before when it changed, and
    /// each server with its route, in the resolver's order.
    private static func dns(_ status: NetworkStatus, was before: DNSState?, _ common: [(String, String)]) -> JournalEntry {
        var fields = [("REACHD_DNS", status.dns.state.rawValue)]
        if let before { fields.append(("REACHD_PREVIOUS_DNS", before.rawValue)) }
        for server in status.dns.servers {
            fields.append(("REACHD_DNS_SERVER", server.address + " " + server.state.rawValue + (server.interface.map { " " + $0 } ?? "")))
        }
        let message = "DNS: " + StatusFormatter.describe(status.dns) + (before.map { " (was \($0.rawValue))" } ?? "")
        let healthy: Bool = switch status.dns.state {
        case .ok, .none, .unknown: true
        case .unroutable, .failing, .unrecognized: false
        }
        return JournalEntry(kind: .dns, message: message, priority: healthy ? 6 : 5, fields: fields + common)
    }

    private static func destination(_ target: DestinationStatus, was: DestinationState?, _ status: NetworkStatus) -> JournalEntry {
        var fields = [("REACHD_TARGET", target.target), ("REACHD_STATE", target.state.rawValue)]
        if let was { fields.append(("REACHD_PREVIOUS_STATE", was.rawValue)) }
        if let reason = target.reason { fields.append(("REACHD_REASON", reason.rawValue)) }
        if let via = target.via { fields.append(("REACHD_INTERFACE", via.interface)) }
        let message = "\(target.target) \(target.state.rawValue)"
            + (target.reason.map { ": \($0.rawValue)" } ?? target.via.map { " via \($0.interface)" } ?? "")
            + (was.map { " (was \($0.rawValue))" } ?? "")
        return JournalEntry(
            kind: .destination, message: message, priority: target.isReachable ? 6 : 5,
            fields: fields + [("REACHD_SEQ", "\(status.seq)")])
    }
}
