import Testing
@testable import Reachability
@testable import reachd

/// How the host's connections raise a suspicion about a path: failures to
/// several peers with no answer between, within a window; at most one
/// suspicion per window.
@Suite("Connection evidence")
struct ConnectionEvidenceTests {
    static let peers = ["192.0.2.11", "192.0.2.12", "192.0.2.13"].map { IPAddress($0)! }

    /// Whether each failure, in turn, raised a suspicion.
    static func raised(
        _ evidence: inout ConnectionEvidence, _ failures: [(family: AddressFamily, peer: IPAddress, at: ContinuousClock.Instant)]
    ) -> [Bool] {
        failures.map { evidence.failed($0.family, peer: $0.peer, at: $0.at) }
    }

    @Test func threeFailuresToTwoPeersWithinFiveSecondsAreASuspicion() {
        var evidence = ConnectionEvidence()
        let start = ContinuousClock.now
        let raised = Self.raised(&evidence, [
            (.ipv4, Self.peers[0], start), (.ipv4, Self.peers[0], start + .seconds(1)), (.ipv4, Self.peers[1], start + .seconds(2)),
        ])
        #expect(raised == [false, false, true])
    }

    /// One dead server among working ones is that server's.
    @Test func failuresToOnePeerAreNone() {
        var evidence = ConnectionEvidence()
        let start = ContinuousClock.now
        let raised = Self.raised(&evidence, (0..<10).map { (.ipv4, Self.peers[2], start + .milliseconds($0 * 300)) })
        #expect(!raised.contains(true))
    }

    @Test func anAnswerBetweenClearsTheFailures() {
        var evidence = ConnectionEvidence()
        let start = ContinuousClock.now
        var raised = Self.raised(&evidence, [(.ipv4, Self.peers[0], start), (.ipv4, Self.peers[1], start)])
        #expect(evidence.holdsFailures, "the filter lets the next answer through")
        evidence.answered(.ipv4)
        #expect(!evidence.holdsFailures)
        raised += Self.raised(&evidence, [(.ipv4, Self.peers[2], start), (.ipv6, IPAddress("2001:db8::1")!, start)])
        #expect(raised == [false, false, false, false])
        #expect(Self.raised(&evidence, [(.ipv4, Self.peers[0], start), (.ipv4, Self.peers[1], start)]) == [false, true])
    }

    @Test func failuresOlderThanTheWindowAreForgotten() {
        var evidence = ConnectionEvidence()
        let start = ContinuousClock.now
        var raised = Self.raised(&evidence, [(.ipv4, Self.peers[0], start), (.ipv4, Self.peers[1], start + .seconds(1))])
        #expect(evidence.nextExpiry == start + .seconds(5), "the loop wakes to forget the first")
        evidence.forgetExpired(start + .seconds(5))
        #expect(evidence.nextExpiry == start + .seconds(6))
        raised += Self.raised(&evidence, [(.ipv4, Self.peers[2], start + .seconds(5))])
        #expect(raised == [false, false, false])
        evidence.forgetExpired(start + .seconds(20))
        #expect(evidence.nextExpiry == nil, "no address outlives the window")
        #expect(evidence == ConnectionEvidence())
    }

    /// A storm of failures: one suspicion per window.
    @Test func aStormIsOneSuspicionPerWindow() {
        var evidence = ConnectionEvidence()
        let start = ContinuousClock.now
        let raised = Self.raised(&evidence, (0..<100).map { (.ipv4, Self.peers[$0 % 3], start + .milliseconds($0 * 100)) })
        let at = raised.indices.filter { raised[$0] }
        #expect(at.count == 2 && at[1] - at[0] >= 50, "\(at)")
    }

    @Test func theThresholdIsTheConfigurations() {
        var evidence = ConnectionEvidence(.init(failures: 1, peers: 1, window: .seconds(1)))
        #expect(Self.raised(&evidence, [(.ipv6, IPAddress("2001:db8::1")!, .now)]) == [true])
    }
}
