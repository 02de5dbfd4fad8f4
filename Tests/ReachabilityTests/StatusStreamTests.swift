import Foundation
import Testing
@testable import Reachability
import TestSupport

/// What a session delivers of the status over changes of source, without a
/// socket: PROTOCOL.md's promises to a reader, kept by ``StatusStream``.
@Suite("The status stream of a session")
struct StatusStreamTests {
    static let eth0 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "10.0.0.1", source: "10.0.0.2")
    static let tun0 = NetworkPath(interface: "tun0", index: 9, family: .ipv4, gateway: nil, source: "10.8.0.2")

    static func status(_ path: NetworkPath?, seq: UInt64, source: StatusSource) -> NetworkStatus {
        .built(ipv4: .through(path, else: .local), seq: seq, source: source)
    }

    /// Whether a line is a status is looked for from its end (issue 45):
    /// the same answer as a search from its start, wherever the marker is,
    /// and none for an error line.
    @Test func aStatusLineIsFoundFromItsEnd() throws {
        let marker = Array(#""type":"status""#.utf8)
        var generator = SeededGenerator(seed: 45)
        let alphabet = Array(#"{}":,typesau"#.utf8)
        for _ in 0..<3000 {
            var line = (0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            if Bool.random(using: &generator) {
                line.insert(contentsOf: marker, at: Int.random(in: 0...line.count, using: &generator))
            }
            #expect(StatusLineLayout.isStatus(line) == (line.firstRange(ofBytes: marker) != nil), "\(String(decoding: line, as: UTF8.self))")
        }
        let status = StatusLineWriter.line(Self.status(Self.eth0, seq: 1, source: .daemon))
        #expect(StatusLineLayout.isStatus(status))
        #expect(!StatusLineLayout.isStatus(Array(#"{"code":"bad_request","message":"x","type":"error","version":1}"#.utf8)))
    }

    @Test func theSameNetworkFromTheSameSourceIsDeliveredOnce() throws {
        var stream = StatusStream(detail: .full)
        let offered = [
            stream.delivery(of: Self.status(Self.eth0, seq: 1, source: .daemon), line: nil),
            // A resubscription renumbers: the same network, a new number.
            stream.delivery(of: Self.status(Self.eth0, seq: 9, source: .daemon), line: nil),
            stream.delivery(of: Self.status(Self.tun0, seq: 10, source: .daemon), line: nil),
        ]
        #expect(offered.map { $0 != nil } == [true, false, true])
    }

    /// In-process numbered up to 40 while the daemon was away; the daemon
    /// comes back numbering from its own start.
    @Test func seqNeverGoesBackwardsOverAChangeOfSource() throws {
        var stream = StatusStream(detail: .full)
        var delivered: [UInt64] = []
        let offers = [
            Self.status(Self.eth0, seq: 40, source: .inProcess), Self.status(Self.tun0, seq: 3, source: .daemon),
            Self.status(Self.eth0, seq: 4, source: .daemon), Self.status(Self.tun0, seq: 50, source: .daemon),
        ]
        for status in offers {
            if let update = stream.delivery(of: status, line: nil) { delivered.append(try update.status().seq) }
        }
        #expect(delivered == [40, 41, 42, 50], "renumbered above the last delivered, then the daemon's own")
    }

    @Test func aDaemonLinePassesAsItCameOnlyWhileItNeedsNoNewNumber() throws {
        var stream = StatusStream(detail: .full)
        let daemonLine = { (status: NetworkStatus) in Array(DaemonMessage.status(status).line().dropLast()) }
        let destinationsOnly = StatusStream(detail: nil)
        #expect(!destinationsOnly.passesThrough(daemonLine(Self.status(Self.eth0, seq: 1, source: .daemon))))
        _ = stream.delivery(of: Self.status(Self.eth0, seq: 40, source: .inProcess), line: nil)
        let back = Self.status(Self.tun0, seq: 3, source: .daemon)
        let offered = stream.delivery(of: back, line: daemonLine(back))
        let update = try #require(offered)
        let line = try #require(update.line)
        #expect(String(decoding: line, as: UTF8.self).contains(#""seq":41,"#), "the line says the number delivered")
        #expect(!stream.passesThrough(daemonLine(Self.status(Self.eth0, seq: 4, source: .daemon))), "still renumbered")
        _ = stream.delivery(of: Self.status(Self.eth0, seq: 50, source: .daemon), line: nil)
        #expect(stream.passesThrough(daemonLine(Self.status(Self.tun0, seq: 51, source: .daemon))))
        #expect(!stream.passesThrough(Array(#"{"type":"error","code":"bad_request"}"#.utf8)), "an error is no status")
    }

    /// The daemon restarted while the path moved to a VPN: its first status
    /// says no changes, yet the reader was last told eth0.
    @Test func aNewSourcesFirstStatusSaysWhatChangedSinceTheLastDelivered() throws {
        var stream = StatusStream(detail: .full)
        _ = stream.delivery(of: Self.status(Self.eth0, seq: 7, source: .daemon), line: nil)
        let offered = stream.delivery(of: Self.status(Self.tun0, seq: 1, source: .inProcess), line: nil)
        let update = try #require(offered)
        #expect(try update.status().changes == [.path(.ipv4, from: Self.eth0, to: Self.tun0)])
    }

    @Test func eachSourceIsAnnouncedOnceUntilItChanges() {
        var stream = StatusStream(detail: .summary)
        var said = [stream.follow(.daemon), stream.follow(.daemon), stream.follow(.inProcess)]
        stream.restart()
        // A new run says where it starts.
        said.append(stream.follow(.inProcess))
        #expect(said.map { $0 != nil } == [true, false, true, true])
    }
}
