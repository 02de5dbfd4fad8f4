import Reachability

/// What the host's own connections say of each family's path, judged over
/// a short window: failures to several peers with no answer between them
/// raise a suspicion (a probe decides); an answer while the family is
/// `limited` is a hint of its return. Pure: connections and times in,
/// suspicions out.
///
/// An address is kept only for the window: to count distinct peers.
struct ConnectionEvidence: Equatable {
    /// When failures make a suspicion: `failures` of them, to at least
    /// `peers` distinct peers, within `window`, with no answer between.
    struct Threshold: Equatable {
        var failures = 3
        var peers = 2
        var window: Duration = .seconds(5)
    }

    let threshold: Threshold
    /// One failed connection: to whom, and when.
    private struct Failure: Equatable {
        var peer: IPAddress
        var at: ContinuousClock.Instant
    }

    /// Each family's failures since its last answer, within the window.
    private var failures: [AddressFamily: [Failure]] = [:]
    /// Each family's last suspicion: the next comes a window later at the
    /// earliest, so that a storm of failures is one suspicion per window.
    private var suspected: [AddressFamily: ContinuousClock.Instant] = [:]

    init(_ threshold: Threshold = Threshold()) {
        self.threshold = threshold
    }

    /// A connection on `family`'s published path failed at `now`. Returns
    /// whether that makes a suspicion; the failures that made it are then
    /// forgotten, and none counts for a window after it.
    mutating func failed(_ family: AddressFamily, peer: IPAddress, at now: ContinuousClock.Instant) -> Bool {
        forgetExpired(now)
        if let last = suspected[family], now - last < threshold.window { return false }
        failures[family, default: []].append(Failure(peer: peer, at: now))
        let recent = failures[family]!
        guard recent.count >= threshold.failures, Set(recent.map(\.peer)).count >= threshold.peers else { return false }
        failures[family] = nil
        suspected[family] = now
        return true
    }

    /// A connection on `family`'s path was answered: the failures before it
    /// say nothing of the path now.
    mutating func answered(_ family: AddressFamily) {
        failures[family] = nil
    }

    /// Whether failures wait for an answer that would clear them: the
    /// kernel's filter lets answers through meanwhile, and only then.
    var holdsFailures: Bool { !failures.isEmpty }

    /// When the oldest failure kept leaves the window: the loop wakes then
    /// to forget it (``forgetExpired(_:)``), so that no address outlives it.
    var nextExpiry: ContinuousClock.Instant? {
        failures.values.compactMap { $0.first.map { $0.at + threshold.window } }.min()
    }

    /// Drops the failures older than the window.
    mutating func forgetExpired(_ now: ContinuousClock.Instant) {
        suspected = suspected.filter { now - $0.value < threshold.window }
        for family in failures.keys {
            failures[family]!.removeAll { now - $0.at >= threshold.window }
            if failures[family]!.isEmpty { failures[family] = nil }
        }
    }
}
