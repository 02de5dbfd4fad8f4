import Foundation
import Testing
@testable import Reachability
@testable import ReachabilityPlaceholders

/// A status from a daemon newer than this client: new values in every
/// enum-typed key, new keys at every depth. Nothing in it may make the client
/// throw the status away.
@Suite("Statuses from a newer daemon")
struct FutureDaemonTests {
    /// The status a message carries, `nil` for any other message.
    static func status(_ message: DaemonMessage) -> NetworkStatus? {
        guard case .status(let status) = message else { return nil }
        return status
    }

    /// ProtocolTests' sample as a future daemon might send it, with IPv6 in
    /// an unknown state and IPv4 online behind a new connectivity verdict;
    /// `online` is the daemon's word for it, left out when `nil`.
    static func futureLine(online: Bool? = nil) throws -> [UInt8] {
        var sample = ProtocolTests.sample
        sample.ipv6 = FamilyStatus(reachability: .offline, reason: .noRoute, path: nil)
        var json = try #require(try JSONSerialization.jsonObject(with: Data(DaemonMessage.status(sample).line())) as? [String: Any])
        json["connectivity"] = "captive_with_grace"
        json["connectivity_reason"] = "grace_period"
        json["source"] = "cache"
        json["ipv6"] = "site"
        json["reachability"] = "online"
        json["online"] = online
        json["new_top_level"] = ["nested": [1, 2, 3]]
        var families = try #require(json["families"] as? [String: Any])
        var ipv4 = try #require(families["ipv4"] as? [String: Any])
        var path = try #require(ipv4["path"] as? [String: Any])
        path["family"] = "ipv4"
        path["mtu"] = 1500
        ipv4["path"] = path
        ipv4["latency_ms"] = 12
        var ipv6 = try #require(families["ipv6"] as? [String: Any])
        ipv6["reachability"] = "site"
        ipv6["reason"] = "rate_limited"
        ipv6["hint"] = ["text": "ask your provider"]
        families["ipv4"] = ipv4
        families["ipv6"] = ipv6
        families["mptcp"] = ["reachability": "online", "reason": NSNull(), "path": NSNull()]
        json["families"] = families
        var primary = try #require(json["primary"] as? [String: Any])
        primary["weight"] = 3
        json["primary"] = primary
        var interfaces = try #require(json["interfaces"] as? [[String: Any]])
        interfaces[1]["metered"] = "capped"
        interfaces[1]["operstate"] = "warming"
        interfaces[1]["kind"] = "veth"
        var addresses = try #require(interfaces[1]["addresses"] as? [[String: Any]])
        addresses[0]["scope"] = "nowhere"
        addresses[0]["lifetime"] = 3600
        addresses.append(["address": "aa:bb", "prefix": 0, "family": "mac", "scope": "link", "new": true])
        interfaces[1]["addresses"] = addresses
        json["interfaces"] = interfaces
        return Array(try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]))
    }

    @Test func everyNewValueDecodesToItsUnrecognizedCaseAndNewKeysAreIgnored() throws {
        guard case .status(let status) = try DaemonMessage.decode(try Self.futureLine()) else {
            Issue.record("not a status")
            return
        }
        #expect(status.connectivity == .unrecognized("captive_with_grace"))
        #expect(status.connectivityReason == .unrecognized("grace_period"))
        #expect(status.source == .unrecognized("cache"))
        #expect(status.ipv6.reachability == .unrecognized("site") && status.ipv6.reason == .unrecognized("rate_limited"))
        #expect(status.ipv4.reachability == .online && status.ipv4.path?.interface == "eth0")
        let eth0 = status.interfaces[1]
        #expect(eth0.metered == .unrecognized("capped") && eth0.operstate == "warming")
        #expect(eth0.addresses[0].scope == "nowhere")
        #expect(eth0.addresses[1].family == .unrecognized("mac"))
    }

    /// A newer daemon knows its own values: where this client meets one it
    /// cannot judge, the daemon's `online` and `reachability` stand.
    @Test(arguments: [true, false])
    func theDaemonsOwnWordStandsForWhatTheClientCannotJudge(online: Bool) throws {
        let status = try #require(Self.status(try DaemonMessage.decode(try Self.futureLine(online: online))))
        #expect(status.online == online, "a verdict this client does not know, judged by the daemon")
        #expect(NetworkCondition(status) == (online ? .online : .limited))
        let again = try DaemonMessage.decode(DaemonMessage.status(status).line().dropLast())
        let decodedAgain = try #require(Self.status(again))
        #expect(decodedAgain.online == online, "and re-encoded, it says the same")
        // A level this client does not know beside an offline family: the
        // daemon's word for the host, where it is one this client knows.
        var json = try #require(try JSONSerialization.jsonObject(with: Data(try Self.futureLine(online: online))) as? [String: Any])
        var families = try #require(json["families"] as? [String: Any])
        families["ipv4"] = ["reachability": "satellite", "reason": NSNull(), "path": NSNull()]
        families["ipv6"] = ["reachability": "offline", "reason": "no_route", "path": NSNull()]
        json["families"] = families
        let said = Array(try JSONSerialization.data(withJSONObject: json))
        let satellite = try #require(Self.status(try DaemonMessage.decode(said)))
        #expect(satellite.reachability == .online, "the daemon's word: online")
        json["reachability"] = "orbital"
        let unknown = try #require(Self.status(try DaemonMessage.decode(Array(try JSONSerialization.data(withJSONObject: json)))))
        #expect(unknown.reachability == (online ? .online : .offline),
                "a word this client does not know either: online, in the daemon's words, is a family online by routes")
    }

    /// What docs/PROTOCOL.md promises an older client does with them, where
    /// the daemon's line carries no word of its own.
    @Test func unrecognizedValuesMeanWhatTheProtocolSays() throws {
        let status = try #require(Self.status(try DaemonMessage.decode(try Self.futureLine())))
        #expect(!status.online, "an unrecognized verdict is not full")
        #expect(status.reachability == .online, "the known family decides: an unrecognized level ranks lowest")
        #expect(NetworkCondition(status) == .limited, "routes online, the Internet not confirmed")
        #expect(status.interfaces[1].metered.isMetered, "an unrecognized metering counts as metered")
        #expect(ReachabilityLevel.unrecognized("site") < .offline)
        let (site, zone) = (ReachabilityLevel.unrecognized("site"), ReachabilityLevel.unrecognized("zone"))
        #expect([site < zone, site == zone, zone < site].filter { $0 }.count == 1, "Comparable: exactly one holds")
        #expect(status.family(.unrecognized("mptcp")).reachability == .offline)
    }

    @Test func aStatusWithNewValuesEncodesBackToTheSameValues() throws {
        let status = try #require(Self.status(try DaemonMessage.decode(try Self.futureLine())))
        let again = try DaemonMessage.decode(DaemonMessage.status(status).line().dropLast())
        #expect(again == .status(status))
        #expect(String(decoding: DaemonMessage.status(status).line(), as: UTF8.self).contains(#""connectivity":"captive_with_grace""#))
    }

    @Test func aLineOfAnUnknownTypeIsAMessageToSkipNotAFailure() throws {
        let line = Array(#"{"type":"forecast","version":1,"id":"api","reachability":"reachable"}"#.utf8)
        #expect(try DaemonMessage.decode(line) == .unrecognized(type: "forecast"))
    }

    @Test func knownValuesNeverDecodeAsUnrecognized() {
        for value in Connectivity.allCases { #expect(Connectivity(rawValue: value.rawValue) == value) }
        for value in ReachabilityLevel.allCases { #expect(ReachabilityLevel(rawValue: value.rawValue) == value) }
        for value in UnreachableReason.allCases { #expect(UnreachableReason(rawValue: value.rawValue) == value) }
        for value in ConnectivityReason.allCases { #expect(ConnectivityReason(rawValue: value.rawValue) == value) }
        for value in Metering.allCases { #expect(Metering(rawValue: value.rawValue) == value) }
        for value in StatusSource.allCases { #expect(StatusSource(rawValue: value.rawValue) == value) }
        for value in AddressFamily.allCases { #expect(AddressFamily(rawValue: value.rawValue) == value) }
    }
}
