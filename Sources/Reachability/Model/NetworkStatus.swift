#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The host's network reachability at one moment: what `reachd status --json`
/// prints and what the daemon sends to its clients.
///
/// ```swift
/// let status = try await ReachabilityMonitor.currentStatus()
/// print(status.online ? "online via \(status.primary?.interface ?? "?")" : "offline")
/// ```
public struct NetworkStatus: Codable, Sendable, Equatable {
    /// Its fields, shared between copies until one is changed: a status is
    /// copied a dozen times on a route change's way to its reader (the
    /// engine, the diff, the stream, the writer), and each copy of sixteen
    /// fields went through their value witnesses (callgrind: about 15k
    /// instructions of a change's 115k). A copy is one reference now.
    private var storage: Storage

    private struct Fields: Equatable, Sendable {
        var ipv4: FamilyStatus
        var ipv6: FamilyStatus
        var connectivity: Connectivity
        var portalURL: String?
        var connectivityReason: ConnectivityReason?
        var dns: DNSStatus = .unknown
        var check: DaemonCheck?
        var interfaces: [InterfaceStatus]
        var watched: [DestinationStatus] = []
        var changes: [StatusChange] = []
        var summaryMetered: Bool?
        var seq: UInt64
        var changedAt: Date
        var source: StatusSource
        var network: NetworkNamespace?
        var daemonsWord = DaemonsWord()
    }

    // Changed only where no other status holds it (`unique()`): never
    // while another thread may read it. Its accesses go unchecked at run
    // time: the status holding it is checked, statically, as any struct.
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private mutating func unique() {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
    }

    /// Whether the two hold the same values, field for field (what a
    /// daemon said of `online` and `reachability` aside).
    ///
    /// ```swift
    /// let status = try await ReachabilityMonitor.currentStatus()
    /// let copy = status
    /// assert(copy == status)
    /// ```
    public static func == (lhs: NetworkStatus, rhs: NetworkStatus) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    /// IPv4: how far it reaches, why not further, and its path.
    public var ipv4: FamilyStatus {
        get { storage.fields.ipv4 }
        _modify {
            unique()
            yield &storage.fields.ipv4
        }
    }
    /// IPv6: how far it reaches, why not further, and its path.
    public var ipv6: FamilyStatus {
        get { storage.fields.ipv6 }
        _modify {
            unique()
            yield &storage.fields.ipv6
        }
    }
    /// What an HTTP connectivity check found; `.unknown` while none runs.
    public var connectivity: Connectivity {
        get { storage.fields.connectivity }
        _modify {
            unique()
            yield &storage.fields.connectivity
        }
    }
    /// Where a captive portal sends the user to sign in (the check's redirect
    /// target), when ``connectivity`` is `.portal` and the portal said.
    public var portalURL: String? {
        get { storage.fields.portalURL }
        _modify {
            unique()
            yield &storage.fields.portalURL
        }
    }
    /// Why ``connectivity`` is what it is: what the check's probe got, or
    /// the evidence that made the verdict without one; `nil` while there is
    /// no verdict (no check, or none yet for the current paths), and from a
    /// daemon that predates saying so.
    public var connectivityReason: ConnectivityReason? {
        get { storage.fields.connectivityReason }
        _modify {
            unique()
            yield &storage.fields.connectivityReason
        }
    }
    /// Whether names can resolve: each configured name server judged by
    /// the kernel's route to it, with no packet sent. `.unknown` from a
    /// daemon that predates saying so.
    public var dns: DNSStatus {
        get { storage.fields.dns }
        _modify {
            unique()
            yield &storage.fields.dns
        }
    }
    /// The connectivity check the daemon runs; `nil` when it runs none, in a
    /// status computed in-process, and from a daemon that predates saying so.
    /// Not part of what the status describes: it changes only with the daemon.
    public var check: DaemonCheck? {
        get { storage.fields.check }
        _modify {
            unique()
            yield &storage.fields.check
        }
    }
    /// Every link the kernel reports, loopback included, in index order;
    /// empty in a summary (``isSummary``).
    public var interfaces: [InterfaceStatus] {
        get { storage.fields.interfaces }
        _modify {
            unique()
            yield &storage.fields.interfaces
        }
    }
    /// The destinations the daemon watches itself (`[watch] targets` in
    /// reachd.conf), each judged as the daemon's own uid, in the order
    /// configured; empty in a summary, in a status computed in-process, and
    /// from a daemon that watches none or predates watching.
    public var watched: [DestinationStatus] {
        get { storage.fields.watched }
        _modify {
            unique()
            yield &storage.fields.watched
        }
    }
    /// What differs from the status its reader was sent before, in a fixed
    /// order; empty in the first status a reader is sent, and from a daemon
    /// that predates saying so. A summary leaves out the kinds it does not
    /// carry (links, watched targets).
    ///
    /// ```swift
    /// for change in status.changes {
    ///     print(change.kind)      // "path", "connectivity", ...
    /// }
    /// ```
    public var changes: [StatusChange] {
        get { storage.fields.changes }
        _modify {
            unique()
            yield &storage.fields.changes
        }
    }
    /// A summary's word for ``metered``, which it cannot derive without the
    /// interface list; `nil` in a full status.
    private var summaryMetered: Bool? {
        get { storage.fields.summaryMetered }
        _modify {
            unique()
            yield &storage.fields.summaryMetered
        }
    }
    /// Increases with every published change; a client can tell it missed one.
    public var seq: UInt64 {
        get { storage.fields.seq }
        _modify {
            unique()
            yield &storage.fields.seq
        }
    }
    /// When this state was published.
    public var changedAt: Date {
        get { storage.fields.changedAt }
        _modify {
            unique()
            yield &storage.fields.changedAt
        }
    }
    /// Who computed it: the daemon, or this process (`.inProcess`).
    public var source: StatusSource {
        get { storage.fields.source }
        _modify {
            unique()
            yield &storage.fields.source
        }
    }
    /// The network namespace it describes: the daemon's, or this
    /// process's; `nil` from a daemon that predates saying so. A client
    /// takes no daemon's word for another namespace.
    public var network: NetworkNamespace? {
        get { storage.fields.network }
        _modify {
            unique()
            yield &storage.fields.network
        }
    }
    /// What the daemon's line said of `online` and `reachability`: the word
    /// that stands where this version meets a value it cannot judge (a newer
    /// daemon's level or verdict). Empty for a status computed here.
    private var daemonsWord: DaemonsWord {
        get { storage.fields.daemonsWord }
        _modify {
            unique()
            yield &storage.fields.daemonsWord
        }
    }

    /// Equal whatever it holds: what a daemon said of values a status
    /// carries anyway is no part of what the status describes.
    private struct DaemonsWord: Equatable, Sendable {
        var online: Bool?
        var reachability: ReachabilityLevel?

        static func == (_: DaemonsWord, _: DaemonsWord) -> Bool { true }
    }

    /// A status as the daemon (or a test) builds it.
    public init(
        ipv4: FamilyStatus, ipv6: FamilyStatus, connectivity: Connectivity = .unknown, portalURL: String? = nil,
        interfaces: [InterfaceStatus], seq: UInt64, changedAt: Date, source: StatusSource
    ) {
        storage = Storage(Fields(
            ipv4: ipv4, ipv6: ipv6, connectivity: connectivity, portalURL: portalURL, interfaces: interfaces, seq: seq,
            changedAt: changedAt, source: source))
    }

    /// The better of the two families. Where one is a level this version
    /// does not know (a newer daemon's), the daemon's own word for the host:
    /// its `reachability` when it is a level this version knows, else
    /// `.online` when it said the host is online.
    public var reachability: ReachabilityLevel {
        if ipv4.reachability.isUnrecognized || ipv6.reachability.isUnrecognized {
            if let said = daemonsWord.reachability, !said.isUnrecognized { return said }
            // Online, in the daemon's words, is a family online by routes.
            if daemonsWord.online == true { return .online }
        }
        return max(ipv4.reachability, ipv6.reachability)
    }

    /// `true` when at least one family is online by the kernel's routes and, where a
    /// connectivity check runs, it found the Internet: ``connectivity`` is `.full`, or
    /// `.unknown` (no check, or the first check of a new path still running). Behind a
    /// captive portal or a dead uplink it is `false` while ``reachability`` stays
    /// `.online`: read `reachability` for "could a packet leave", `online` for "will the
    /// Internet answer".
    ///
    /// A status from a newer daemon with a value this version cannot judge
    /// (a verdict or a level it has never seen) is as online as the daemon
    /// said: it knows the value. Without the daemon's word, such a value is
    /// not online (docs/PROTOCOL.md, unknown values).
    public var online: Bool {
        if connectivity.isUnrecognized || ipv4.reachability.isUnrecognized || ipv6.reachability.isUnrecognized,
            let said = daemonsWord.online
        {
            return said
        }
        return reachability == .online && (connectivity == .full || connectivity == .unknown)
    }

    /// The path of the family an RFC 6724 client would try first: IPv6 when it
    /// is online, otherwise IPv4; `nil` when neither is online.
    public var primary: NetworkPath? { ipv6.path ?? ipv4.path }

    /// The state of one family: ``ipv4`` or ``ipv6``.
    /// Whether the primary path leaves through a metered interface (NWPath's
    /// `isExpensive`): defer large downloads and background sync while it does.
    public var metered: Bool {
        if let summaryMetered { return summaryMetered }
        guard let primary else { return false }
        return interfaces.first { $0.index == primary.index }?.metered.isMetered ?? false
    }

    /// The state of one family: ``ipv4`` or ``ipv6``; a family this version
    /// does not know is not described, so offline.
    public func family(_ family: AddressFamily) -> FamilyStatus {
        switch family {
        case .ipv4: ipv4
        case .ipv6: ipv6
        case .unrecognized: FamilyStatus(reachability: .offline, reason: nil, path: nil)
        }
    }

    /// Whether this is a summary: everything but the interface list
    /// (``StatusDetail/summary``), which is empty.
    public var isSummary: Bool { summaryMetered != nil }

    /// The status without its interface list, as a summary subscriber of the
    /// daemon receives it; ``metered`` keeps its value.
    public func summary() -> NetworkStatus {
        guard !isSummary else { return self }
        var summary = self
        summary.summaryMetered = metered
        summary.interfaces = []
        summary.watched = []
        // Room for them all first: `filter` grew the list, a new buffer
        // and a copy, at each change it kept (a handover keeps three).
        var kept: [StatusChange] = []
        kept.reserveCapacity(changes.count)
        for change in changes where change.isInSummary { kept.append(change) }
        summary.changes = kept
        return summary
    }

    /// This status as the first a reader is sent: where it starts from,
    /// with no changes.
    package func asFirst() -> NetworkStatus {
        var first = self
        first.changes = []
        return first
    }

    /// This status in the form `detail` asks for.
    public func detailed(_ detail: StatusDetail) -> NetworkStatus {
        switch detail {
        case .full: self
        case .summary: summary()
        }
    }

    /// Whether two statuses describe the same network, ignoring when and by whom
    /// they were published. The daemon publishes only when this is `false`.
    public func describesSameNetwork(as other: NetworkStatus) -> Bool {
        hasSameSummary(as: other) && interfaces == other.interfaces && watched == other.watched
            && isSummary == other.isSummary
    }

    /// Whether the two agree on everything a summary carries: a summary
    /// subscriber hears of a status only when this is `false`.
    public func hasSameSummary(as other: NetworkStatus) -> Bool {
        ipv4 == other.ipv4 && ipv6 == other.ipv6 && connectivity == other.connectivity
            && connectivityReason == other.connectivityReason && portalURL == other.portalURL && metered == other.metered && dns == other.dns
    }

    private enum CodingKeys: String, CodingKey {
        case online, reachability, ipv4, ipv6, connectivity, primary, families, interfaces, watched, changes, check, dns
        case portalURL = "portal_url"
        case connectivityReason = "connectivity_reason"
        case metered, detail
        case network = "netns"
        case seq
        case changedAt = "changed_at"
        case source
    }

    private struct Families: Codable {
        var ipv4: FamilyStatus
        var ipv6: FamilyStatus
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let families = try container.decode(Families.self, forKey: .families)
        let connectivity = try container.decode(Connectivity.self, forKey: .connectivity)
        // Absent from daemons that predate the connectivity check. Apps open
        // it, so it is checked here too: a client may be reading anything.
        let portalURL = try container.decodeIfPresent(String.self, forKey: .portalURL).flatMap(PortalURL.validated)
        // A summary has no interface list, and says what it would have told.
        let interfaces = try container.decodeIfPresent([InterfaceStatus].self, forKey: .interfaces)
        let summaryMetered = interfaces != nil ? nil : try container.decodeIfPresent(Bool.self, forKey: .metered) ?? false
        // Absent from daemons that predate watching, and from summaries; read
        // leniently, as the optional keys below: the host's status stands
        // without it.
        let watched = (try? container.decodeIfPresent([DestinationStatus].self, forKey: .watched)) ?? []
        // Absent from daemons that predate it. Each entry is read on its
        // own: a kind this version does not know is one it ignores.
        let changes = (try? container.decodeIfPresent([StatusChange].self, forKey: .changes)) ?? []
        let seq = try container.decode(UInt64.self, forKey: .seq)
        let stamp = try container.decode(String.self, forKey: .changedAt)
        guard let date = Timestamp.parse(stamp) else {
            throw DecodingError.dataCorruptedError(
                forKey: .changedAt, in: container,
                debugDescription: "changed_at \"\(stamp)\" is not an RFC 3339 timestamp")
        }
        let source = try container.decode(StatusSource.self, forKey: .source)
        var fields = Fields(
            ipv4: families.ipv4, ipv6: families.ipv6, connectivity: connectivity, portalURL: portalURL,
            interfaces: interfaces ?? [], watched: watched, changes: changes, summaryMetered: summaryMetered, seq: seq,
            changedAt: date, source: source)
        // Each optional, and read leniently: a newer daemon may say them
        // otherwise, and what this version can't read it does without.
        fields.network = try? container.decodeIfPresent(NetworkNamespace.self, forKey: .network)
        fields.check = try? container.decodeIfPresent(DaemonCheck.self, forKey: .check)
        fields.dns = (try? container.decodeIfPresent(DNSStatus.self, forKey: .dns)) ?? .unknown
        fields.connectivityReason = try? container.decodeIfPresent(ConnectivityReason.self, forKey: .connectivityReason)
        fields.daemonsWord = DaemonsWord(
            online: try? container.decodeIfPresent(Bool.self, forKey: .online),
            reachability: try? container.decodeIfPresent(ReachabilityLevel.self, forKey: .reachability))
        storage = Storage(fields)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(online, forKey: .online)
        try container.encode(reachability, forKey: .reachability)
        try container.encode(ipv4.reachability, forKey: .ipv4)
        try container.encode(ipv6.reachability, forKey: .ipv6)
        try container.encode(connectivity, forKey: .connectivity)
        try container.encode(connectivityReason, forKey: .connectivityReason)
        try container.encode(dns, forKey: .dns)
        try container.encode(changes, forKey: .changes)
        try container.encode(check, forKey: .check)
        try container.encode(portalURL, forKey: .portalURL)
        try container.encode(metered, forKey: .metered)
        try container.encode(network, forKey: .network)
        try container.encode(primary, forKey: .primary)
        try container.encode(Families(ipv4: ipv4, ipv6: ipv6), forKey: .families)
        if isSummary {
            try container.encode(StatusDetail.summary.rawValue, forKey: .detail)
        } else {
            try container.encode(interfaces, forKey: .interfaces)
            try container.encode(watched, forKey: .watched)
        }
        try container.encode(seq, forKey: .seq)
        try container.encode(Timestamp.format(changedAt), forKey: .changedAt)
        try container.encode(source, forKey: .source)
    }
}

extension NetworkStatus: CustomReflectable {
    /// Its fields, as a struct's own would show: what `print`, `dump` and a
    /// failed test's message show of a status, not its shared storage.
    ///
    /// ```swift
    /// let status = try await ReachabilityMonitor.currentStatus()
    /// dump(status)
    /// ```
    public var customMirror: Mirror {
        Mirror(self, children: Mirror(reflecting: storage.fields).children, displayStyle: .struct)
    }
}
