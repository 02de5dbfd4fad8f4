import Foundation
import Testing
import TestSupport
@testable import Reachability

/// What a session makes of each line a daemon sends, before it acts on it
/// (``DaemonLink``): lines fed one by one, without a socket; the namespace
/// check is a status's `netns` against none.
@Suite("A session's link to a daemon")
struct DaemonLinkTests {
    static let statusLine = Array(FakeDaemon.newerDaemonsLine.utf8)
    static let otherNetworksLine = Array(FakeDaemon.newerDaemonsLine.replacingOccurrences(
        of: #""online":true"#, with: #""netns":{"inode":1,"device":1,"cookie":1},"online":true"#).utf8)

    static func destinationLine(id: String?) -> [UInt8] {
        let status = DestinationStatus(
            id: id, target: "api.example.com:443", host: "api.example.com", port: 443, state: .reachable, reason: nil,
            via: nil, addresses: [], seq: 1, source: .daemon)
        return Array(DaemonMessage.destination(status).line().dropLast())
    }

    /// A link whose daemon is another network's whenever a status names one.
    static func link() -> DaemonLink {
        DaemonLink(firstAnswerBy: .now + .seconds(1)) { (status: NetworkStatus) throws(DaemonClientError) in
            if status.network != nil { throw .otherNetwork(path: "/run/reachd/reachd.sock") }
        }
    }

    static func kinds(_ events: [DaemonLink.Event]) -> [String] {
        events.map { event in
            switch event {
            case .news: "news"
            case .answered: "answered"
            case .status: "status"
            case .destination(let id, _, _): "destination \(id)"
            case .refused(_, let code, _): "refused \(code)"
            case .failed(_, let otherNetwork): otherNetwork ? "failed: other network" : "failed"
            }
        }
    }

    @Test func answersBeforeTheFirstStatusCountOnlyOnceItCame() {
        var link = Self.link()
        #expect(link.read(Self.destinationLine(id: "0"), passesThrough: false).isEmpty, "held")
        #expect(link.read(Self.destinationLine(id: nil), passesThrough: false).isEmpty, "names nothing asked")
        let first = link.read(Self.statusLine, passesThrough: true)
        #expect(Self.kinds(first) == ["answered", "destination 0"], "a first status is compared, and releases what was held")
        #expect(link.hasAnswered)
        #expect(Self.kinds(link.read(Self.statusLine, passesThrough: true)) == ["news"])
        #expect(Self.kinds(link.read(Self.statusLine, passesThrough: false)) == ["status"])
        #expect(Self.kinds(link.read(Self.destinationLine(id: "1"), passesThrough: false)) == ["destination 1"])
    }

    @Test func aFirstStatusFromAnotherNetworkFailsTheLinkAndReleasesNothing() {
        var link = Self.link()
        _ = link.read(Self.destinationLine(id: "0"), passesThrough: false)
        #expect(Self.kinds(link.read(Self.otherNetworksLine, passesThrough: true)) == ["failed: other network"])
        #expect(!link.hasAnswered)
    }

    @Test func refusalsAndGarbageAreEvents() {
        var link = Self.link()
        let refusal = Array(#"{"code":"too_many_watches","id":"3","message":"over the limit","type":"error","version":1}"#.utf8)
        #expect(Self.kinds(link.read(refusal, passesThrough: false)) == ["refused too_many_watches"])
        #expect(Self.kinds(link.read(Array("not json".utf8), passesThrough: false)) == ["failed"])
        #expect(link.read(Array(#"{"type":"gossip","version":1}"#.utf8), passesThrough: false).isEmpty, "a newer daemon's kind of line")
    }
}
