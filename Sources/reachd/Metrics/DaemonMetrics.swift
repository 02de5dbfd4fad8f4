import Prometheus
import Reachability

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the daemon tells Prometheus: the published state, the watched
/// targets' answers and a few counters of its own, in the text format. The
/// names are a contract (docs/PROTOCOL.md, Metrics). Label values come from
/// the daemon alone (families, verdicts, the configured targets), never
/// from a client: a scrape's size does not grow with who connects.
///
/// swift-prometheus writes the exposition: its registry escapes label
/// values and groups HELP and TYPE lines as the format asks. Values are set
/// as the state changes, on the daemon's thread; a scrape only encodes.
final class DaemonMetrics {
    private let registry = PrometheusCollectorRegistry()
    private let online: Gauge
    private let familyOnline: [AddressFamily: Gauge]
    private let connectivity: [String: Gauge]
    private let dns: [String: Gauge]
    private let metered: Gauge
    private let statusChanges: Counter
    private let pathChanges: [AddressFamily: Counter]
    private let lastChange: Gauge
    private let subscribers: Gauge
    private let refused: Counter
    private let resyncs: Counter
    private let journalDropped: Counter
    private let connectionsFailed: [AddressFamily: Counter]
    private let stalls: [AddressFamily: Counter]
    /// By target (`HOST:PORT`, as a status's `watched` names them).
    private var targets: [String: (reachable: Gauge, changes: Counter)] = [:]
    /// What the counters said at the last scrape.
    private var counted = Counts()
    private var seenStatus = false

    /// The verdicts `reachd_connectivity` has a series for, always all of them.
    static let connectivityStates = ["unknown", "none", "portal", "limited", "full"]
    /// The verdicts `reachd_dns` has a series for, always all of them.
    static let dnsStates = DNSState.allCases.map(\.rawValue)

    init(watching watched: [Destination]) {
        let registry = registry
        online = registry.makeGauge(descriptor: Self.name("online", unit: "", "1 when the host is online: routes out, and full access if the connectivity check runs."))
        familyOnline = Dictionary(uniqueKeysWithValues: [AddressFamily.ipv4, .ipv6].map { family in
            (family, registry.makeGauge(descriptor: Self.name("family_online", unit: "", "1 when the family's routes reach the Internet (a default route over a link with carrier)."), labels: [("family", family.rawValue)]))
        })
        connectivity = Dictionary(uniqueKeysWithValues: Self.connectivityStates.map { state in
            (state, registry.makeGauge(descriptor: Self.name("connectivity", unit: "", "The connectivity check's verdict, as a state set: 1 for the current state, 0 for the others."), labels: [("state", state)]))
        })
        dns = Dictionary(uniqueKeysWithValues: Self.dnsStates.map { state in
            (state, registry.makeGauge(descriptor: Self.name("dns", unit: "", "Name resolution's verdict (ok: a configured name server is routable), as a state set: 1 for the current state, 0 for the others."), labels: [("state", state)]))
        })
        metered = registry.makeGauge(descriptor: Self.name("metered", unit: "", "1 when the primary path is metered."))
        statusChanges = registry.makeCounter(descriptor: Self.name("status_changes", unit: "total", "Statuses published since the daemon started, the first not counted."))
        pathChanges = Dictionary(uniqueKeysWithValues: [AddressFamily.ipv4, .ipv6].map { family in
            (family, registry.makeCounter(descriptor: Self.name("path_changes", unit: "total", "Changes of the family's path (its interface, gateway or source address) since the daemon started: handovers, and the path coming or going."), labels: [("family", family.rawValue)]))
        })
        lastChange = registry.makeGauge(descriptor: Self.name("last_change", unit: "timestamp_seconds", "When the published status last changed, in seconds since the epoch."))
        subscribers = registry.makeGauge(descriptor: Self.name("subscribers", unit: "", "Clients subscribed to the status now."))
        refused = registry.makeCounter(descriptor: Self.name("clients_refused", unit: "total", "Connections refused: over the limits, or out of descriptors."))
        resyncs = registry.makeCounter(descriptor: Self.name("netlink_resyncs", unit: "total", "Netlink overruns, each resynchronised from a fresh dump."))
        journalDropped = registry.makeCounter(descriptor: Self.name("journal_dropped", unit: "total", "Journal entries dropped: journald's queue stayed full while 256 more waited, or journald was not there."))
        connectionsFailed = Dictionary(uniqueKeysWithValues: [AddressFamily.ipv4, .ipv6].map { family in
            (family, registry.makeCounter(descriptor: Self.name("connections_failed", unit: "total", "The host's TCP connections through the family's path that sent and got nothing back, as the kernel told their end."), labels: [("family", family.rawValue)]))
        })
        stalls = Dictionary(uniqueKeysWithValues: [AddressFamily.ipv4, .ipv6].map { family in
            (family, registry.makeCounter(descriptor: Self.name("stalls", unit: "total", "Suspicions that the family's path stopped working, raised by the host's failing connections; each asks the connectivity check for a probe."), labels: [("family", family.rawValue)]))
        })
        registry.makeGauge(descriptor: Self.name("build_info", unit: "", "1, labelled with the daemon's version."), labels: [("version", ReachdVersion.current)]).set(Int64(1))
        for target in watched {
            let label = [("target", target.description)]
            targets[target.description] = (
                registry.makeGauge(descriptor: Self.name("destination_reachable", unit: "", "1 when a watched target is reachable by the host's routing, as the daemon's uid; 0 otherwise, or before its name resolved."), labels: label),
                registry.makeCounter(descriptor: Self.name("destination_changes", unit: "total", "Changes of a watched target's state since the daemon started, its first answer not counted."), labels: label)
            )
        }
    }

    /// reachd_NAME[_UNIT], with its help text.
    private static func name(_ name: String, unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "reachd", metricName: name, unitName: unit, helpText: help)
    }

    /// A status was published: the host's state and the watched targets'
    /// answers are set from it, the counters count what it says changed.
    func observe(_ status: NetworkStatus) {
        online.set(Int64(status.online ? 1 : 0))
        familyOnline[.ipv4]?.set(Int64(status.ipv4.reachability == .online ? 1 : 0))
        familyOnline[.ipv6]?.set(Int64(status.ipv6.reachability == .online ? 1 : 0))
        for (state, gauge) in connectivity { gauge.set(Int64(status.connectivity.rawValue == state ? 1 : 0)) }
        for (state, gauge) in dns { gauge.set(Int64(status.dns.state.rawValue == state ? 1 : 0)) }
        metered.set(Int64(status.metered ? 1 : 0))
        lastChange.set(status.changedAt.timeIntervalSince1970)
        if seenStatus { statusChanges.increment() }
        seenStatus = true
        for answer in status.watched { targets[answer.target]?.reachable.set(Int64(answer.isReachable ? 1 : 0)) }
        for change in status.changes {
            switch change {
            case .path(let family, _, _):
                pathChanges[family]?.increment()
            case .watched(let target, let from?, let to) where from != to && from != .pending:
                // Resolving a name is no answer yet: its first answer is no change.
                targets[target]?.changes.increment()
            case .watched, .reachability, .connectivity, .dns, .metered, .portalURL, .interfaces, .unrecognized:
                break
            }
        }
    }

    /// What the daemon counts as it goes, read at scrape time.
    struct Counts {
        /// Connections refused, Unix clients and scrapers alike.
        var refused = 0
        var resyncs = 0
        var journalDropped = 0
        /// The passive watch's, per family.
        var connectionsFailed: [AddressFamily: Int] = [:]
        var stalls: [AddressFamily: Int] = [:]
    }

    /// The exposition, with the counts read at scrape time brought up to date.
    func exposition(subscribers count: Int, counts: Counts) -> [UInt8] {
        subscribers.set(Int64(count))
        // Counters only rise: each count is added by its difference.
        for (counter, now, then) in [(refused, counts.refused, counted.refused), (resyncs, counts.resyncs, counted.resyncs),
                                     (journalDropped, counts.journalDropped, counted.journalDropped)] where now > then {
            counter.increment(by: Int64(now - then))
        }
        for family in [AddressFamily.ipv4, .ipv6] {
            for (counter, now, then) in [
                (connectionsFailed[family], counts.connectionsFailed[family, default: 0], counted.connectionsFailed[family, default: 0]),
                (stalls[family], counts.stalls[family, default: 0], counted.stalls[family, default: 0]),
            ] where now > then {
                counter?.increment(by: Int64(now - then))
            }
        }
        counted = Counts(
            refused: max(counted.refused, counts.refused), resyncs: max(counted.resyncs, counts.resyncs),
            journalDropped: max(counted.journalDropped, counts.journalDropped),
            connectionsFailed: counted.connectionsFailed.merging(counts.connectionsFailed, uniquingKeysWith: max),
            stalls: counted.stalls.merging(counts.stalls, uniquingKeysWith: max))
        return registry.emitToBuffer()
    }
}
