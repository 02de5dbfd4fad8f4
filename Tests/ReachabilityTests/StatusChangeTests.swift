import Foundation
import Testing
import TestSupport
@testable import Reachability

/// What changed, worked out once where the status is made (``StatusDiff``
/// through ``StatusPublisher``), merged for a reader that missed statuses,
/// and read back from a daemon that may be newer.
@Suite("Status changes")
struct StatusChangeTests {
    static let eth0 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "10.0.0.1", source: "10.0.0.2")
    static let tun0 = NetworkPath(interface: "tun0", index: 9, family: .ipv4, gateway: nil, source: "10.8.0.2")
    static let link = InterfaceStatus(
        name: "eth0", index: 2, up: true, carrier: true, operstate: "up", loopback: false,
        addresses: [InterfaceAddress(address: "10.0.0.2", prefix: 24, family: .ipv4, scope: "global")])

    static func online(_ path: NetworkPath) -> FamilyStatus {
        FamilyStatus(reachability: .online, reason: nil, path: path)
    }

    static let offline6 = FamilyStatus(reachability: .offline, reason: .noRoute, path: nil)

    /// A publisher that has published `ipv4` on eth0.
    static func publisher(_ ipv4: FamilyStatus = online(eth0)) -> StatusPublisher {
        var publisher = StatusPublisher(source: .daemon)
        _ = publisher.publish(ipv4: ipv4, ipv6: offline6, interfaces: [link], at: Date())
        return publisher
    }

    @Test func theFirstStatusHasNoChanges() throws {
        var publisher = StatusPublisher(source: .daemon)
        let firstPublished = publisher.publish(ipv4: Self.online(Self.eth0), ipv6: Self.offline6, interfaces: [], at: Date())
        let first = try #require(firstPublished)
        #expect(first.changes.isEmpty)
    }

    /// Online before and after: the handover alone is the news.
    @Test(arguments: [
        tun0,
        NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "10.0.0.254", source: "10.0.0.2"),
        NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "10.0.0.1", source: "10.0.0.77"),
    ])
    func aHandoverIsAPathChangeAlone(to path: NetworkPath) throws {
        var publisher = Self.publisher()
        let statusPublished = publisher.publish(ipv4: Self.online(path), ipv6: Self.offline6, interfaces: [Self.link], at: Date())
        let status = try #require(statusPublished)
        #expect(status.changes == [.path(.ipv4, from: Self.eth0, to: path)])
        #expect(status.online)
    }

    @Test func goingOfflineChangesReachabilityAndPath() throws {
        var publisher = Self.publisher()
        let down = FamilyStatus(reachability: .local, reason: .noRoute, path: nil)
        let statusPublished = publisher.publish(ipv4: down, ipv6: Self.offline6, interfaces: [Self.link], at: Date())
        let status = try #require(statusPublished)
        #expect(status.changes == [.reachability(.ipv4, from: .online, to: .local), .path(.ipv4, from: Self.eth0, to: nil)])
    }

    @Test func aNewReasonAloneIsAReachabilityChangeWithTheSameLevel() throws {
        var publisher = Self.publisher(FamilyStatus(reachability: .local, reason: .noRoute, path: nil))
        let statusPublished = publisher.publish(
            ipv4: FamilyStatus(reachability: .local, reason: .noCarrier, path: nil), ipv6: Self.offline6,
            interfaces: [Self.link], at: Date())
        let status = try #require(statusPublished)
        #expect(status.changes == [.reachability(.ipv4, from: .local, to: .local)])
    }

    /// Still limited, for another reason: a connectivity change that says
    /// so, and no change of configuration for GLib.
    @Test func aNewConnectivityReasonAloneIsAChangeOfTheSameVerdict() throws {
        var publisher = Self.publisher()
        _ = publisher.publish(
            ipv4: Self.online(Self.eth0), ipv6: Self.offline6, interfaces: [Self.link], connectivity: .limited,
            connectivityReason: .refused, at: Date())
        let statusPublished = publisher.publish(
            ipv4: Self.online(Self.eth0), ipv6: Self.offline6, interfaces: [Self.link], connectivity: .limited,
            connectivityReason: .noAnswer, at: Date())
        let status = try #require(statusPublished)
        #expect(status.changes == [.connectivity(from: .limited, to: .limited)])
        #expect(status.connectivityReason == .noAnswer)
        let configurationChanged = status.changes.contains(where: \.changesConfiguration)
        #expect(!configurationChanged)
        #expect(!StatusChange.connectivity(from: .full, to: .limited).changesConfiguration,
                "a verdict signals GLib apps by moving GLib's connectivity, which the statuses' comparison tells")
        #expect(StatusChange.path(.ipv4, from: nil, to: Self.eth0).changesConfiguration)
    }

    /// A container's veth: news for a full subscriber, none for a summary one.
    @Test func aNewLinkIsAnInterfacesChangeThatNoSummaryCarries() throws {
        var publisher = Self.publisher()
        let veth = InterfaceStatus(name: "veth7", index: 12, up: true, carrier: true, operstate: "up", loopback: false, addresses: [])
        let statusPublished = publisher.publish(
            ipv4: Self.online(Self.eth0), ipv6: Self.offline6, interfaces: [Self.link, veth], at: Date())
        let status = try #require(statusPublished)
        #expect(status.changes == [.interfaces(links: ["veth7"])])
        #expect(status.summary().changes.isEmpty)
        let configurationChanged = status.changes.contains(where: \.changesConfiguration)
        #expect(!configurationChanged)
    }

    @Test func theVerdictAndThePortalAreChangesOfTheirOwn() throws {
        var publisher = Self.publisher()
        let statusPublished = publisher.publish(
            ipv4: Self.online(Self.eth0), ipv6: Self.offline6, interfaces: [Self.link], connectivity: .portal,
            portalURL: "http://portal.example/", at: Date())
        let status = try #require(statusPublished)
        #expect(status.changes == [.connectivity(from: .unknown, to: .portal), .portalURL])
        #expect(status.summary().changes == status.changes)
    }

    /// Answers that come in the pass that made the status join its changes;
    /// later ones are a status of their own, with only theirs.
    @Test func watchedAnswersJoinAnUnsentStatusAndMakeTheirOwnOtherwise() throws {
        var publisher = Self.publisher()
        let movedPublished = publisher.publish(ipv4: Self.online(Self.tun0), ipv6: Self.offline6, interfaces: [Self.link], at: Date())
        let moved = try #require(movedPublished)
        let answer = DestinationStatus(
            id: nil, target: "api.example:443", host: "api.example", port: 443, state: .reachable, reason: nil,
            via: nil, addresses: [], seq: 1, source: .daemon)
        let joinedPublished = publisher.publish(watched: [answer], unsent: true, at: Date())
        let joined = try #require(joinedPublished)
        #expect(joined.seq == moved.seq)
        #expect(joined.changes == [.path(.ipv4, from: Self.eth0, to: Self.tun0), .watched(target: "api.example:443", from: nil, to: .reachable)])
        var gone = answer
        gone.state = .unreachable
        let ownPublished = publisher.publish(watched: [gone], unsent: false, at: Date())
        let own = try #require(ownPublished)
        #expect(own.seq == moved.seq + 1)
        #expect(own.changes == [.watched(target: "api.example:443", from: .reachable, to: .unreachable)])
    }

    /// The publisher's two rules can't disagree: it publishes exactly when
    /// something changed, and says what.
    @Test func changesAreEmptyExactlyWhenTheNetworkIsTheSame() {
        var generator = SeededGenerator(seed: 33)
        for _ in 0..<2000 {
            var old = StatusLineWriterTests.status(&generator)
            old.watched = []
            var new = old
            func pick<T>(_ values: [T]) -> T { values.randomElement(using: &generator)! }
            for _ in 0..<Int.random(in: 0...2, using: &generator) {
                switch Int.random(in: 0...6, using: &generator) {
                case 0: new.ipv4.path = pick([nil, Self.eth0, Self.tun0])
                case 1: new.ipv6.reachability = pick(ReachabilityLevel.allCases)
                case 2: new.ipv4.reason = pick([nil, .noRoute, .noCarrier])
                case 3: new.connectivity = pick(Connectivity.allCases)
                case 4: new.portalURL = pick([nil, "http://a.example/"])
                case 5: new.interfaces = pick([[], [Self.link], old.interfaces + [InterfaceStatus(name: "veth9", index: 999, up: true, carrier: true, operstate: "up", loopback: false, addresses: [])]])
                default: new.interfaces = old.interfaces.map { var link = $0; link.carrier.toggle(); return link }
                }
            }
            let changes = StatusDiff.changes(from: old, to: new)
            #expect(changes.isEmpty == old.describesSameNetwork(as: new), "\(changes)")
        }
    }

    @Test func aReaderThatMissedStatusesIsToldEachKindOnceFromWhereItWas() {
        let merged = StatusChange.merging(
            [.path(.ipv4, from: Self.eth0, to: Self.tun0), .interfaces(links: ["tun0"])],
            [.path(.ipv4, from: Self.tun0, to: nil), .interfaces(links: ["eth0", "tun0"]), .connectivity(from: .full, to: .none)])
        // In the protocol's order, whatever order they came in.
        #expect(merged == [
            .path(.ipv4, from: Self.eth0, to: nil), .connectivity(from: .full, to: .none), .interfaces(links: ["tun0", "eth0"]),
        ])
        // Away and back: still news, for the connections on it may be dead.
        #expect(StatusChange.merging([.path(.ipv4, from: Self.eth0, to: Self.tun0)], [.path(.ipv4, from: Self.tun0, to: Self.eth0)])
            == [.path(.ipv4, from: Self.eth0, to: Self.eth0)])
    }

    /// 500 containers came and went while a subscriber did not read: the
    /// change it is sent at last names 64 links and counts the rest, where
    /// it named all 1,000 (a 15 KB line, encoded again for each such
    /// subscriber at every status).
    @Test func aMergedInterfacesChangeNamesAtMost64LinksAndCountsTheRest() throws {
        var merged: [StatusChange] = []
        for pair in 0..<500 {
            merged = StatusChange.merging(merged, [.interfaces(naming: ["veth\(pair)a", "veth\(pair)b"])])
        }
        guard case .interfaces(let links, let more)? = merged.first, merged.count == 1 else {
            Issue.record("not one interfaces change: \(merged)")
            return
        }
        #expect(links == (0..<32).flatMap { ["veth\($0)a", "veth\($0)b"] }, "the first ones, in the order they came")
        #expect(more == 1000 - 64)
        // One status that names too many is bounded the same way.
        #expect(StatusChange.interfaces(naming: (0..<100).map { "veth\($0)" }) == .interfaces(
            links: (0..<64).map { "veth\($0)" }, more: 36))
        var status = try #require(Self.publisher().current)
        status.changes = merged
        let line = String(decoding: DaemonMessage.status(status).line(), as: UTF8.self)
        #expect(line.contains(#""more":936"#), "\(line)")
        guard case .status(let decoded) = try? DaemonMessage.decode(Array(line.utf8).dropLast()) else {
            Issue.record("the line does not decode")
            return
        }
        #expect(decoded.changes == merged)
    }

    /// A newer daemon's kinds, and fields this version can't read, are
    /// ignored; the status stands.
    @Test func unknownKindsAndUnreadableFieldsAreUnrecognizedNotFailures() throws {
        var generator = SeededGenerator(seed: 5)
        var status = StatusLineWriterTests.status(&generator)
        status.changes = [.path(.ipv4, from: Self.eth0, to: Self.tun0)]
        var line = String(decoding: DaemonMessage.status(status).line(), as: UTF8.self)
        line = line.replacingOccurrences(
            of: #""changes":["#,
            with: #""changes":[{"kind":"dns","servers":["10.0.0.53"]},{"kind":"path","family":7},"#)
        guard case .status(let decoded) = try DaemonMessage.decode(Array(line.utf8)) else {
            Issue.record("not a status")
            return
        }
        #expect(decoded.changes == [.unrecognized(kind: "dns"), .unrecognized(kind: "path"), .path(.ipv4, from: Self.eth0, to: Self.tun0)])
        let notAList = line.replacingOccurrences(of: #""changes":["#, with: #""changes":"path","ignored":["#)
        guard case .status(let lenient) = try DaemonMessage.decode(Array(notAList.utf8)) else {
            Issue.record("not a status")
            return
        }
        #expect(lenient.changes.isEmpty)
    }
}
