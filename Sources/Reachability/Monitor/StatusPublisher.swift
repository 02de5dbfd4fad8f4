#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns evaluations into published statuses: numbers them and drops the ones
/// that describe the same network as the last published one, so that a flood
/// of route changes that leaves the answer alone publishes nothing.
struct StatusPublisher: Sendable {
    let source: StatusSource
    /// The number of the first status published.
    let firstSeq: UInt64
    /// The namespace every status describes.
    let network: NetworkNamespace?
    private(set) var current: NetworkStatus?
    /// The daemon's watched targets' answers, carried by every status from
    /// the one that took them in (``publish(watched:at:)``).
    private var watched: [DestinationStatus] = []

    init(source: StatusSource, firstSeq: UInt64 = 1, network: NetworkNamespace? = nil) {
        self.source = source
        self.firstSeq = firstSeq
        self.network = network
    }

    /// Returns the new status when it differs from the last one published, else `nil`.
    mutating func publish(
        ipv4: FamilyStatus, ipv6: FamilyStatus, interfaces: [InterfaceStatus],
        connectivity: Connectivity = .unknown, portalURL: String? = nil, at now: Date
    ) -> NetworkStatus? {
        var candidate = NetworkStatus(
            ipv4: ipv4, ipv6: ipv6, connectivity: connectivity, portalURL: portalURL, interfaces: interfaces,
            seq: current.map { $0.seq + 1 } ?? firstSeq, changedAt: now, source: source)
        candidate.network = network
        candidate.watched = watched
        if let current, current.describesSameNetwork(as: candidate) { return nil }
        current = candidate
        return candidate
    }

    /// Takes in the watched targets' answers: the status that carries them,
    /// numbered as the next change, or `nil` when they are what was published.
    mutating func publish(watched answers: [DestinationStatus], at now: Date) -> NetworkStatus? {
        watched = answers
        guard let current else { return nil }
        return publish(
            ipv4: current.ipv4, ipv6: current.ipv6, interfaces: current.interfaces,
            connectivity: current.connectivity, portalURL: current.portalURL, at: now)
    }
}
