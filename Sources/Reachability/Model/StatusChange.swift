/// One thing that differs between a published status and the one its reader
/// was sent before it: the status's ``NetworkStatus/changes``.
///
/// The daemon (or, in-process, the library) works them out once, where the
/// status is made; the log, the journal, the metrics, `reachd monitor` and the
/// GIO module only render them. A handover (a VPN taking the default route,
/// another uplink becoming preferred, a new gateway or source address) is a
/// ``path(_:from:to:)`` change even when the host stays online, and it is
/// the change on which long-lived connections should reconnect:
///
/// ```swift
/// for try await status in monitor.statuses() {
///     for case .path(let family, let from, let to) in status.changes {
///         print("\(family) path: \(from?.interface ?? "none") → \(to?.interface ?? "none")")
///     }
/// }
/// ```
///
/// The first status a reader is sent has no changes: it is where the reader
/// starts from, not news.
public enum StatusChange: Sendable, Hashable {
    /// A family's path moved: another link, gateway or source address, or
    /// none (`nil`) where there was one, or one where there was none.
    case path(AddressFamily, from: NetworkPath?, to: NetworkPath?)
    /// How far a family reaches, or why it does not reach further
    /// (``FamilyStatus/reason``; `from` equals `to` when only that changed).
    case reachability(AddressFamily, from: ReachabilityLevel, to: ReachabilityLevel)
    /// The connectivity check's verdict.
    case connectivity(from: Connectivity, to: Connectivity)
    /// Name resolution (``NetworkStatus/dns``): its verdict, or its servers
    /// and their routes (`from` equals `to` when only those changed).
    case dns(from: DNSState, to: DNSState)
    /// Whether the primary path is metered.
    case metered(from: Bool, to: Bool)
    /// Where a captive portal sends the user (``NetworkStatus/portalURL``).
    case portalURL
    /// The links: the names of those that came, went or changed (state,
    /// carrier, addresses, metering, name), at most
    /// ``maximumLinksNamed``, and how many `more` there were beyond them.
    /// Not in a summary.
    case interfaces(links: [String], more: Int = 0)
    /// A target the daemon watches (`[watch] targets`): its state, reason,
    /// path or addresses; `from` is `nil` for a target new to the list.
    /// Not in a summary.
    case watched(target: String, from: DestinationState?, to: DestinationState)
    /// A kind this version does not know, from a newer daemon: ignore it
    /// (docs/PROTOCOL.md, unknown values).
    case unrecognized(kind: String)

    /// The kind's wire spelling.
    public var kind: String {
        switch self {
        case .path: "path"
        case .reachability: "reachability"
        case .connectivity: "connectivity"
        case .dns: "dns"
        case .metered: "metered"
        case .portalURL: "portal_url"
        case .interfaces: "interfaces"
        case .watched: "watched"
        case .unrecognized(let kind): kind
        }
    }

    /// Whether a summary carries it: everything but the interface list and
    /// the watched targets, which a summary leaves out.
    public var isInSummary: Bool {
        switch self {
        case .path, .reachability, .connectivity, .dns, .metered, .portalURL, .unrecognized: true
        case .interfaces, .watched: false
        }
    }

    /// Whether GLib calls it a change of network configuration by itself
    /// (`network-changed` although GLib's three properties may stay): the
    /// way out moved, a handover to a VPN or another uplink. Any other
    /// change signals only where it moves one of those properties
    /// (available, connectivity, metered), which comparing the statuses
    /// tells: a new path's check answering `full` after the handover's
    /// `unknown` is full access both times for GLib, and no second signal.
    ///
    /// ```swift
    /// let handover = status.changes.contains(where: \.changesConfiguration)
    /// ```
    public var changesConfiguration: Bool {
        switch self {
        case .path: true
        case .connectivity, .reachability, .metered, .portalURL, .dns, .interfaces, .watched, .unrecognized: false
        }
    }

    /// Links an ``interfaces(links:more:)`` change names at most: a host
    /// whose containers come and go makes a link pair each time, and a
    /// reader that missed those statuses must not be sent a line naming
    /// them all.
    public static let maximumLinksNamed = 64

    /// The change naming `names` (and `more` unnamed), the first
    /// ``maximumLinksNamed`` named and the rest counted.
    public static func interfaces(naming names: [String], more: Int = 0) -> StatusChange {
        let named = Array(names.prefix(maximumLinksNamed))
        return .interfaces(links: named, more: more + names.count - named.count)
    }

    /// What a reader that missed statuses was not told, in one set: each
    /// kind once, from what `earlier` started at to what `later` ended at,
    /// in the protocol's order. A path that moved and came back is still a
    /// change: the connections on it may have broken meanwhile.
    public static func merging(_ earlier: [StatusChange], _ later: [StatusChange]) -> [StatusChange] {
        var merged = earlier
        for change in later {
            guard let position = merged.firstIndex(where: { $0.subject == change.subject }) else {
                merged.append(change)
                continue
            }
            merged[position] = merged[position].followed(by: change)
        }
        // The protocol's order; within a rank (watched targets), as they came.
        return merged.enumerated().sorted { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }.map(\.element)
    }

    /// Where a change stands in a status's list (docs/PROTOCOL.md, Changes):
    /// each family's reachability then path, IPv4 first, then the verdict,
    /// name resolution,
    /// the portal, metering, the links, the watched targets.
    private var rank: Int {
        func family(_ family: AddressFamily) -> Int {
            switch family {
            case .ipv4: 0
            case .ipv6: 2
            case .unrecognized: 4
            }
        }
        switch self {
        case .reachability(let name, _, _): return family(name)
        case .path(let name, _, _): return family(name) + 1
        case .connectivity: return 10
        case .dns: return 11
        case .portalURL: return 12
        case .metered: return 13
        case .interfaces: return 14
        case .watched: return 15
        case .unrecognized: return 16
        }
    }

    /// What a change is about: two changes with one subject merge.
    private enum Subject: Hashable {
        case path(AddressFamily)
        case reachability(AddressFamily)
        case connectivity, dns, metered, portalURL, interfaces
        case watched(String)
        case unrecognized(String)
    }

    private var subject: Subject {
        switch self {
        case .path(let family, _, _): .path(family)
        case .reachability(let family, _, _): .reachability(family)
        case .connectivity: .connectivity
        case .dns: .dns
        case .metered: .metered
        case .portalURL: .portalURL
        case .interfaces: .interfaces
        case .watched(let target, _, _): .watched(target)
        case .unrecognized(let kind): .unrecognized(kind)
        }
    }

    /// This change, then `later` of the same subject, as one.
    private func followed(by later: StatusChange) -> StatusChange {
        switch (self, later) {
        case (.path(let family, let from, _), .path(_, _, let to)): .path(family, from: from, to: to)
        case (.reachability(let family, let from, _), .reachability(_, _, let to)):
            .reachability(family, from: from, to: to)
        case (.connectivity(let from, _), .connectivity(_, let to)): .connectivity(from: from, to: to)
        case (.dns(let from, _), .dns(_, let to)): .dns(from: from, to: to)
        case (.metered(let from, _), .metered(_, let to)): .metered(from: from, to: to)
        case (.interfaces(let before, let beforeMore), .interfaces(let after, let afterMore)):
            // A link counted in `more` on one side and named on the other
            // may be counted twice: `more` is at most what it says.
            .interfaces(naming: before + after.filter { !before.contains($0) }, more: beforeMore + afterMore)
        case (.watched(let target, let from, _), .watched(_, _, let to)): .watched(target: target, from: from, to: to)
        case (.path, _), (.reachability, _), (.connectivity, _), (.dns, _), (.metered, _), (.portalURL, _), (.interfaces, _),
            (.watched, _), (.unrecognized, _):
            later
        }
    }
}

extension StatusChange: Codable {
    private enum CodingKeys: String, CodingKey {
        case kind, family, from, to, links, more, target
    }

    /// A kind this version knows whose fields it can't read (a newer
    /// daemon's family or level, say) is unrecognized too: the status stands
    /// without it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        func known() throws -> StatusChange? {
            switch kind {
            case "path":
                return .path(
                    try container.decode(AddressFamily.self, forKey: .family),
                    from: try container.decodeIfPresent(NetworkPath.self, forKey: .from),
                    to: try container.decodeIfPresent(NetworkPath.self, forKey: .to))
            case "reachability":
                return .reachability(
                    try container.decode(AddressFamily.self, forKey: .family),
                    from: try container.decode(ReachabilityLevel.self, forKey: .from),
                    to: try container.decode(ReachabilityLevel.self, forKey: .to))
            case "connectivity":
                return .connectivity(
                    from: try container.decode(Connectivity.self, forKey: .from),
                    to: try container.decode(Connectivity.self, forKey: .to))
            case "dns":
                return .dns(
                    from: try container.decode(DNSState.self, forKey: .from),
                    to: try container.decode(DNSState.self, forKey: .to))
            case "metered":
                return .metered(
                    from: try container.decode(Bool.self, forKey: .from), to: try container.decode(Bool.self, forKey: .to))
            case "portal_url":
                return .portalURL
            case "interfaces":
                return .interfaces(
                    links: try container.decode([String].self, forKey: .links),
                    more: try container.decodeIfPresent(Int.self, forKey: .more) ?? 0)
            case "watched":
                return .watched(
                    target: try container.decode(String.self, forKey: .target),
                    from: try container.decodeIfPresent(DestinationState.self, forKey: .from),
                    to: try container.decode(DestinationState.self, forKey: .to))
            default:
                return nil
            }
        }
        self = (try? known()) ?? .unrecognized(kind: kind)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        switch self {
        case .path(let family, let from, let to):
            try container.encode(family, forKey: .family)
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
        case .reachability(let family, let from, let to):
            try container.encode(family, forKey: .family)
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
        case .connectivity(let from, let to):
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
        case .dns(let from, let to):
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
        case .metered(let from, let to):
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
        case .portalURL, .unrecognized:
            break
        case .interfaces(let links, let more):
            try container.encode(links, forKey: .links)
            if more > 0 { try container.encode(more, forKey: .more) }
        case .watched(let target, let from, let to):
            try container.encode(target, forKey: .target)
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
        }
    }
}
