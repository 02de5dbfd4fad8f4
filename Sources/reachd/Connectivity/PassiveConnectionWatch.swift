import Reachability

/// The host's own TCP connections as evidence about the published paths,
/// with no packet of ours: the kernel tells each connection's end
/// (``ClosedConnectionSocket``, filtered in the kernel to failures, and to
/// answers while a return is news), its peer's route tells which path it
/// took, and ``ConnectionEvidence`` weighs it.
///
/// Loopback peers, and peers the kernel reaches on-link or by another way
/// than the family's published path, say nothing of that path's gateway and
/// are ignored. What a peer's route is stays cached for the evidence's
/// window, and no longer; no address or port leaves this type.
final class PassiveConnectionWatch {
    /// What the connections said, for the connectivity check.
    enum News: Equatable {
        /// Connections through `family`'s path fail: probe it.
        case failing(AddressFamily)
        /// A connection through `family`'s path was answered.
        case answered(AddressFamily)
    }

    private let socket: ClosedConnectionSocket
    private(set) var evidence: ConnectionEvidence
    /// Each online family's path: its output link and gateway.
    private var paths: [AddressFamily: PathEgress] = [:]
    /// Each peer's family, when its route is a published path's, else
    /// `nil`; kept for the window.
    private var routes: [Endpoints: (family: AddressFamily?, at: ContinuousClock.Instant)] = [:]

    /// What a route lookup depends on: the peer and the source.
    private struct Endpoints: Hashable {
        var peer: IPAddress
        var source: IPAddress

        init(_ connection: ClosedConnection) {
            peer = connection.peer
            source = connection.source
        }
    }
    /// Failed connections on a published path, per family, for the metrics.
    private(set) var failedCount: [AddressFamily: Int] = [:]
    /// Suspicions raised, per family, for the metrics.
    private(set) var stallCount: [AddressFamily: Int] = [:]

    init(_ threshold: ConnectionEvidence.Threshold, filtered: Bool = true) throws(NetlinkError) {
        socket = try ClosedConnectionSocket(filtered: filtered)
        evidence = ConnectionEvidence(threshold)
    }

    var fileDescriptor: Int32 { socket.fileDescriptor }

    /// A published status: the paths connections are judged against. A
    /// changed path makes the cached routes and the evidence stale.
    func follow(_ status: NetworkStatus) {
        let paths = PathEgress.of(status)
        guard paths != self.paths else { return }
        self.paths = paths
        routes = [:]
        evidence = ConnectionEvidence(evidence.threshold)
    }

    /// Lets answered connections through the filter while they are news:
    /// `wanted` (a family is `limited`, and its return would be), or a
    /// failure waits for an answer that would clear it ("no answer
    /// between" must see the answers). On a working network that is one
    /// answer per failure.
    func awaitAnswers(_ wanted: Bool) throws(NetlinkError) {
        try socket.letThroughAnswered(wanted || evidence.holdsFailures)
    }

    /// The connections that ended since the last call, judged (what left
    /// the window forgotten first, ``forgetExpired(_:)``).
    func take(_ now: ContinuousClock.Instant) throws(NetlinkError) -> [News] {
        let connections = try socket.read().filter { !$0.peer.isLoopback && paths[$0.family] != nil }
        let unknown = Array(Set(connections.map(Endpoints.init).filter { routes[$0] == nil }))
        if !unknown.isEmpty {
            let answers = try socket.routes(of: unknown.map { ($0.peer, $0.source) })
            for (key, answer) in zip(unknown, answers) {
                // The published path's own link and gateway: an on-link peer
                // (no gateway) of a path with one says nothing of it.
                let family = answer.flatMap { route in
                    paths[key.peer.family].flatMap { path in
                        path.index == route.interface && path.gateway == route.gateway ? key.peer.family : nil
                    }
                }
                routes[key] = (family, now)
            }
        }
        var news: [News] = []
        for connection in connections {
            guard let family = routes[Endpoints(connection)]?.family else { continue }
            switch connection.outcome {
            case .failed:
                failedCount[family, default: 0] += 1
                if evidence.failed(family, peer: connection.peer, at: now) {
                    stallCount[family, default: 0] += 1
                    news.append(.failing(family))
                }
            case .answered:
                evidence.answered(family)
                if !news.contains(.answered(family)) { news.append(.answered(family)) }
            }
        }
        return news
    }

    /// When the oldest failure or cached route leaves the window: the loop
    /// wakes then to forget it.
    var nextDeadline: ContinuousClock.Instant? {
        Deadline.earliest(evidence.nextExpiry, routes.values.map(\.at).min().map { $0 + evidence.threshold.window })
    }

    /// Forgets the failures and routes older than the window, when one is:
    /// called on every pass of the loop, it does nothing on most.
    func forgetExpired(_ now: ContinuousClock.Instant) {
        guard let due = nextDeadline, now >= due else { return }
        evidence.forgetExpired(now)
        routes = routes.filter { now - $0.value.at < evidence.threshold.window }
    }
}

