import Foundation
import Logging
import Synchronization
import Testing
@testable import Reachability
@testable import reachd
import TestSupport

/// The daemon announces a published status (its log line, journal entry
/// and STATUS=) a moment after its subscribers have it: on two cores the
/// subscribers it had just woken waited for that work. Every status is
/// announced, in order: a burst at once past a bound, and whatever waits
/// when the daemon stops.
@Suite("When the daemon announces a change")
struct StatusAnnouncerTests {
    /// Each message logged, in order.
    final class Messages: Sendable {
        let logged = Mutex<[String]>([])
        var seqs: [UInt64] {
            logged.withLock { $0 }.compactMap { line in
                line.hasPrefix("#") ? UInt64(line.dropFirst().prefix { $0 != " " }) : nil
            }
        }
    }

    struct RecordingHandler: LogHandler {
        let messages: Messages
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { messages.logged.withLock { $0.append("\(event.message)") } }
    }

    static func announcer() -> (StatusAnnouncer, Messages) {
        let messages = Messages()
        let logger = Logger(label: "test") { _ in RecordingHandler(messages: messages) }
        return (StatusAnnouncer(systemd: SystemdNotifier(environment: [:]), journal: nil, logger: logger), messages)
    }

    static func status(_ seq: UInt64) -> NetworkStatus { .built(seq: seq) }

    @Test func aStatusIsAnnouncedAMomentAfterItIsPublishedWithThoseThatFollowedIt() throws {
        let (announcer, messages) = Self.announcer()
        let poll = try EventPoll<DaemonEventToken>()
        let published = ContinuousClock.now
        announcer.observe(Self.status(2), published, poll: poll)
        #expect(messages.seqs.isEmpty, "announced as it was published")
        #expect(announcer.nextDeadline == published + StatusAnnouncer.announceAfter, "no wake-up set for it")
        announcer.endPass(published, poll: poll)
        announcer.observe(Self.status(3), published + .microseconds(500), poll: poll)
        announcer.endPass(published + .microseconds(500), poll: poll)
        #expect(messages.seqs.isEmpty, "announced before its time")
        #expect(announcer.nextDeadline == published + StatusAnnouncer.announceAfter, "the first one's time moved")
        announcer.endPass(published + StatusAnnouncer.announceAfter, poll: poll)
        #expect(messages.seqs == [2, 3])
        #expect(announcer.nextDeadline == nil, "a wake-up left with nothing to announce")
    }

    @Test func aBurstIsAnnouncedAtOncePastItsBound() throws {
        let (announcer, messages) = Self.announcer()
        let poll = try EventPoll<DaemonEventToken>()
        let now = ContinuousClock.now
        let burst = UInt64(StatusAnnouncer.maximumUnannounced)
        for seq in 1...burst { announcer.observe(Self.status(seq), now, poll: poll) }
        #expect(messages.seqs == Array(1...burst))
        #expect(announcer.nextDeadline == nil)
    }

    @Test func whatWaitsIsAnnouncedWhenTheDaemonStops() throws {
        let (announcer, messages) = Self.announcer()
        let poll = try EventPoll<DaemonEventToken>()
        announcer.observe(Self.status(7), .now, poll: poll)
        announcer.stopping(poll: poll)
        #expect(messages.seqs == [7])
    }
}
