#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns evaluations into published statuses: numbers them, drops the ones
/// that describe the same network as the last published one, so that a flood
/// of route changes that leaves the answer alone publishes nothing, and says
/// what changed in the rest (``StatusDiff``).
struct StatusPublisher: Sendable {
    let source: StatusSource
    /// The number of the first status published.
    let firstSeq: UInt64
    /// The namespace every status describes.
    let network: NetworkNamespace?
    private(set) var current: NetworkStatus?

    init(source: StatusSource, firstSeq: UInt64 = 1, network: NetworkNamespace? = nil) {
        self.source = source
        self.firstSeq = firstSeq
        self.network = network
    }

    /// Returns the new status when it differs from the last one published, else `nil`.
    mutating func publish(
        ipv4: FamilyStatus, ipv6: FamilyStatus, interfaces: [InterfaceStatus],
        connectivity: Connectivity = .unknown, portalURL: String? = nil, connectivityReason: ConnectivityReason? = nil,
        dns: DNSStatus = .unknown, at now: Date
    ) -> NetworkStatus? {
        var candidate = NetworkStatus(
            ipv4: ipv4, ipv6: ipv6, connectivity: connectivity, portalURL: portalURL, interfaces: interfaces,
            seq: current.map { $0.seq + 1 } ?? firstSeq, changedAt: now, source: source)
        candidate.network = network
        candidate.dns = dns
        candidate.connectivityReason = connectivityReason
        // The watched targets' answers change only by publish(watched:).
        candidate.watched = current?.watched ?? []
        if let current {
            // The plain comparison first: a route flood that moves nothing
            // evaluates thousands of candidates, and none needs its changes.
            if current.describesSameNetwork(as: candidate) { return nil }
            candidate.changes = StatusDiff.changes(from: current, to: candidate)
        }
        current = candidate
        return candidate
    }

    /// Takes in the watched targets' answers: the status that carries them,
    /// or `nil` when they are what the current status carries.
    ///
    /// - Parameter unsent: the current status has reached no one yet (it was
    ///   made in the same pass, before the answers its change moved): it
    ///   takes them under its own number, and one status tells the change
    ///   instead of two, the first already stale.
    mutating func publish(watched answers: [DestinationStatus], unsent: Bool, at now: Date) -> NetworkStatus? {
        guard var status = current, status.watched != answers else { return nil }
        let before = status
        status.watched = answers
        let changes = StatusDiff.changes(from: before, to: status)
        if unsent {
            status.changes = StatusChange.merging(status.changes, changes)
        } else {
            status.changes = changes
            status.seq += 1
            status.changedAt = now
        }
        current = status
        return status
    }
}
