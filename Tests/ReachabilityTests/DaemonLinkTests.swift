import Foundation
import Testing
import TestSupport
@testable import Reachability

/// What a session makes of each line a daemon sends, before it acts on it
/// (``DaemonLink``): lines fed one by one, without a socket; the namespace
/// check is a status's `netns` against the one the link was made in.
@Suite("A session's link to a daemon")
struct DaemonLinkTests {
    static func line(naming netns: String) -> [UInt8] {
        Array(FakeDaemon.newerDaemonsLine.replacingOccurrences(of: #""online":true"#, with: netns + #""online":true"#).utf8)
    }

    static let statusLine = line(naming: #""netns":{"inode":4026531840,"device":4,"cookie":1},"#)
    static let otherNetworksLine = line(naming: #""netns":{"inode":4026532001,"device":4,"cookie":2},"#)

    static func destinationLine(id: String?) -> [UInt8] {
        let status = DestinationStatus(
            id: id, target: "api.example.com:443", host: "api.example.com", port: 443, state: .reachable, reason: nil,
            via: nil, addresses: [], seq: 1, source: .daemon)
        return Array(DaemonMessage.destination(status).line().dropLast())
    }

    /// A link made in the namespace ``statusLine`` names.
    static func link() -> DaemonLink {
        DaemonLink(path: "/run/reachd/reachd.sock", ownNetwork: NetworkNamespace(inode: 4026531840, device: 4, cookie: 1),
                   firstAnswerBy: .now + .seconds(1))
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

    /// A status that names no namespace proves nothing: an older daemon, or
    /// one that is not reachd. The cookies decide where both have one, and
    /// the namespace file where a cookie is missing.
    @Test func aFirstStatusIsTakenOnlyForTheLinksOwnNetwork() {
        var unnamed = Self.link()
        #expect(Self.kinds(unnamed.read(Array(FakeDaemon.newerDaemonsLine.utf8), passesThrough: true)) == ["failed: other network"])
        var sameFile = Self.link()
        let noCookie = Self.line(naming: #""netns":{"inode":4026531840,"device":4},"#)
        #expect(Self.kinds(sameFile.read(noCookie, passesThrough: true)) == ["answered"])
        var otherFile = Self.link()
        let otherNoCookie = Self.line(naming: #""netns":{"inode":4026532001,"device":4},"#)
        #expect(Self.kinds(otherFile.read(otherNoCookie, passesThrough: true)) == ["failed: other network"])
        var unknownOwn = DaemonLink(path: "/run/reachd/reachd.sock", ownNetwork: nil, firstAnswerBy: .now + .seconds(1))
        #expect(Self.kinds(unknownOwn.read(Self.otherNetworksLine, passesThrough: true)) == ["answered"],
                "with neither a cookie nor /proc, nothing here can say otherwise")
    }

    @Test func refusalsAndGarbageAreEvents() {
        var link = Self.link()
        let refusal = Array(#"{"code":"too_many_watches","id":"3","message":"over the limit","type":"error","version":1}"#.utf8)
        #expect(Self.kinds(link.read(refusal, passesThrough: false)) == ["refused too_many_watches"])
        #expect(Self.kinds(link.read(Array("not json".utf8), passesThrough: false)) == ["failed"])
        #expect(link.read(Array(#"{"type":"gossip","version":1}"#.utf8), passesThrough: false).isEmpty, "a newer daemon's kind of line")
    }
}
