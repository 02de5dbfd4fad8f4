import Reachability

/// One structured journal entry about a published change: a family going
/// online or not, the connectivity check's new verdict, a watched target's
/// new state. Each kind has its own `MESSAGE_ID` (a catalog ID, as systemd's
/// own services have), so that the history is a query:
///
/// ```sh
/// journalctl MESSAGE_ID=0b48f89eacaa4316b01d3b13b6e716f6 REACHD_FAMILY=ipv4 --since yesterday \
///   -o verbose --output-fields=REACHD_REACHABILITY,REACHD_REASON
/// ```
///
/// Fields hold the protocol's words (docs/PROTOCOL.md), so a query matches
/// what `reachd status --json` says.
struct JournalEntry {
    /// What changed: one `MESSAGE_ID` per kind, never reused for another.
    enum Kind: String, CaseIterable {
        case family = "0b48f89eacaa4316b01d3b13b6e716f6"
        case connectivity = "882f406292b345458c16703deead3d9f"
        case destination = "0fcb124ef37a4a6bbecca317f6c28059"

        var messageID: String { rawValue }
    }

    var kind: Kind
    var message: String
    /// syslog(3): 5 (notice) for a loss, 6 (info) otherwise.
    var priority: Int
    /// `REACHD_*` fields, in order; no value is empty.
    var fields: [(name: String, value: String)]

    /// The entries for `status`, published after `previous` (`nil` for the
    /// daemon's first status, whose entries say where it started from):
    /// one per family whose reachability or reason changed, one when the
    /// verdict did, one per watched target whose state did. The first
    /// status's `unknown` verdict and a name still resolving say nothing.
    static func changes(from previous: NetworkStatus?, to status: NetworkStatus) -> [JournalEntry] {
        var entries: [JournalEntry] = []
        let common = [("REACHD_ONLINE", status.online ? "1" : "0"), ("REACHD_SEQ", "\(status.seq)")]
        for family in [AddressFamily.ipv4, .ipv6] {
            let now = status.family(family)
            let before = previous?.family(family)
            guard before?.reachability != now.reachability || before?.reason != now.reason else { continue }
            var fields = [("REACHD_FAMILY", family.rawValue), ("REACHD_REACHABILITY", now.reachability.rawValue)]
            if let before { fields.append(("REACHD_PREVIOUS_REACHABILITY", before.reachability.rawValue)) }
            if let reason = now.reason { fields.append(("REACHD_REASON", reason.rawValue)) }
            if let path = now.path {
                fields.append(("REACHD_INTERFACE", path.interface))
                if let gateway = path.gateway { fields.append(("REACHD_GATEWAY", gateway)) }
            }
            let name = family == .ipv4 ? "IPv4" : "IPv6"
            let message = "\(name) \(now.reachability.rawValue)"
                + (now.reason.map { ": \($0.rawValue)" } ?? now.path.map { " via \($0.interface)" } ?? "")
                + (before.map { " (was \($0.reachability.rawValue))" } ?? "")
            entries.append(JournalEntry(
                kind: .family, message: message, priority: now.reachability == .online ? 6 : 5, fields: fields + common))
        }
        if previous?.connectivity != status.connectivity, previous != nil || status.connectivity != .unknown {
            var fields = [("REACHD_CONNECTIVITY", status.connectivity.rawValue)]
            if let previous { fields.append(("REACHD_PREVIOUS_CONNECTIVITY", previous.connectivity.rawValue)) }
            if let portal = status.portalURL { fields.append(("REACHD_PORTAL_URL", portal)) }
            let message = "connectivity \(status.connectivity.rawValue)"
                + (status.portalURL.map { ", sign in at \($0)" } ?? "")
                + (previous.map { " (was \($0.connectivity.rawValue))" } ?? "")
            entries.append(JournalEntry(
                kind: .connectivity, message: message,
                priority: status.connectivity == .full || status.connectivity == .unknown ? 6 : 5, fields: fields + common))
        }
        let before = Dictionary((previous?.watched ?? []).map { ($0.target, $0.state) }, uniquingKeysWith: { first, _ in first })
        for target in status.watched where target.state != .pending && before[target.target] != target.state {
            var fields = [("REACHD_TARGET", target.target), ("REACHD_STATE", target.state.rawValue)]
            let was = before[target.target].flatMap { $0 == .pending ? nil : $0 }
            if let was { fields.append(("REACHD_PREVIOUS_STATE", was.rawValue)) }
            if let reason = target.reason { fields.append(("REACHD_REASON", reason.rawValue)) }
            if let via = target.via { fields.append(("REACHD_INTERFACE", via.interface)) }
            let message = "\(target.target) \(target.state.rawValue)"
                + (target.reason.map { ": \($0.rawValue)" } ?? target.via.map { " via \($0.interface)" } ?? "")
                + (was.map { " (was \($0.rawValue))" } ?? "")
            entries.append(JournalEntry(
                kind: .destination, message: message, priority: target.isReachable ? 6 : 5,
                fields: fields + [("REACHD_SEQ", "\(status.seq)")]))
        }
        return entries
    }
}
