import Foundation
import Testing
@testable import Reachability

/// The destinations a session follows, their ids on the daemon's
/// connection and the answers delivered, without a socket.
@Suite("The destinations a session follows")
struct FollowedDestinationsTests {
    static func key(_ target: String) -> DestinationKey {
        DestinationKey(try! Destination(parsing: target), uid: nil, family: nil)
    }

    static func answer(_ state: DestinationState, source: StatusSource = .daemon) -> DestinationStatus {
        DestinationStatus(
            target: "example.com:443", host: "example.com", port: 443, state: state, reason: nil, via: nil, addresses: [],
            seq: 1, source: source)
    }

    @Test func anIdIsNeverGivenTwiceAndOneGoneStillCounts() throws {
        var followed = FollowedDestinations()
        let added = [followed.add(Self.key("example.com:443")), followed.add(Self.key("example.com:443")),
                     followed.add(Self.key("example.org:443"))]
        let first = try #require(added[0])
        #expect(added[1] == nil, "followed already")
        #expect(added[2] != nil && added[2] != first)
        let removed = followed.remove(Self.key("example.com:443"))
        #expect(removed?.wireID == first)
        #expect(followed.key(wireID: first) == nil && followed.wasIssued(first), "an answer to it is no protocol error")
        #expect(!followed.wasIssued("99") && !followed.wasIssued("x"))
        let again = followed.add(Self.key("example.com:443"))
        #expect(again != nil && again != first)
    }

    @Test func whatTheDaemonRefusedIsAnsweredInProcessAndNotSentAgain() throws {
        var followed = FollowedDestinations()
        let (a, b, c) = (Self.key("a.example:443"), Self.key("b.example:443"), Self.key("c.example:443"))
        for key in [a, b, c] { _ = followed.add(key) }
        followed.refusedByDaemon(b)
        #expect(followed.anyRefusedByDaemon)
        #expect(followed.daemonWatches.map(\.key) == [a, c], "in the order followed")
        #expect(followed.inProcess(daemonAnswers: true) == [b])
        #expect(followed.inProcess(daemonAnswers: false) == [a, b, c])
        #expect(followed.ordered([c, b, a]) == [a, b, c])
        let refused = followed.remove(b)
        #expect(refused?.daemonHolds == false, "no unwatch for what it refused")
        #expect(!followed.anyRefusedByDaemon)
    }

    @Test func pendingDoesNotReplaceAnAnswerAndARepeatIsNotNews() {
        var followed = FollowedDestinations()
        let key = Self.key("example.com:443")
        _ = followed.add(key)
        let delivered = [
            followed.deliver(Self.answer(.reachable), for: key),
            followed.deliver(Self.answer(.reachable), for: key),
            followed.deliver(Self.answer(.pending, source: .inProcess), for: key),
            followed.deliver(Self.answer(.reachable, source: .inProcess), for: key),
            followed.deliver(Self.answer(.reachable), for: Self.key("unfollowed.example:443")),
        ]
        // The first; not the same answer again; not a new source's pending
        // (it knows nothing yet); the same answer from another source; not
        // one for a destination not followed.
        #expect(delivered == [true, false, false, true, false])
    }
}
