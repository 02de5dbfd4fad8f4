import Foundation
import Testing
import TestSupport
@testable import Reachability

/// The daemon's hand-written status encoder against `Codable`'s: the same
/// bytes for every status, or clients of either would see a different protocol.
@Suite("Status lines, written by hand")
struct StatusLineWriterTests {
    /// Text that exercises every escape: quotes, backslashes, slashes, control
    /// characters, non-ASCII, an emoji.
    static let awkward = ["eth0", "wlan0", "a\"b", "back\\slash", "http://portal.example/login?x=1&y=/2",
                          "tab\there", "new\nline", "\u{01}\u{1f}\u{08}\u{0c}\r", "zürich", "🛜", "", "br-0.10"]

    static func text(_ generator: inout SeededGenerator) -> String {
        awkward.randomElement(using: &generator)!
    }

    static func status(_ generator: inout SeededGenerator) -> NetworkStatus {
        func path(_ family: AddressFamily) -> NetworkPath? {
            Bool.random(using: &generator) ? nil : NetworkPath(
                interface: text(&generator), index: Int.random(in: 1...100_000, using: &generator), family: family,
                gateway: Bool.random(using: &generator) ? nil : text(&generator),
                source: Bool.random(using: &generator) ? nil : text(&generator))
        }
        func family(_ family: AddressFamily) -> FamilyStatus {
            FamilyStatus(
                reachability: ReachabilityLevel.allCases.randomElement(using: &generator)!,
                reason: Bool.random(using: &generator) ? nil : UnreachableReason.allCases.randomElement(using: &generator)!,
                path: path(family))
        }
        let links = (0..<Int.random(in: 0...6, using: &generator)).map { index in
            InterfaceStatus(
                name: text(&generator), index: index + 1, up: Bool.random(using: &generator),
                carrier: Bool.random(using: &generator), operstate: text(&generator), loopback: Bool.random(using: &generator),
                addresses: (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                    InterfaceAddress(address: text(&generator), prefix: Int.random(in: 0...128, using: &generator),
                                     family: Bool.random(using: &generator) ? .ipv4 : .ipv6, scope: text(&generator))
                },
                metered: Metering.allCases.randomElement(using: &generator)!)
        }
        // Any instant from 1970 to 2100, to the microsecond, as a daemon's clock gives.
        let microseconds = Double(UInt64.random(in: 0...4_102_444_800_000_000, using: &generator))
        var status = NetworkStatus(
            ipv4: family(.ipv4), ipv6: family(.ipv6),
            connectivity: Connectivity.allCases.randomElement(using: &generator)!,
            portalURL: Bool.random(using: &generator) ? nil : text(&generator), interfaces: links,
            seq: UInt64.random(in: 0...UInt64.max, using: &generator),
            changedAt: Date(timeIntervalSince1970: microseconds / 1_000_000),
            source: Bool.random(using: &generator) ? .daemon : .inProcess)
        let connectivityReasons: [ConnectivityReason?] = [nil, .unrecognized("new\u{1}reason")] + ConnectivityReason.allCases
        status.connectivityReason = connectivityReasons.randomElement(using: &generator)!
        if Bool.random(using: &generator) {
            status.check = DaemonCheck(url: text(&generator), answerWithin: .milliseconds(Int.random(in: 0...1_200_000, using: &generator)))
        }
        // The daemon's watched targets, with every optional key both ways.
        func route() -> DestinationRoute? {
            Bool.random(using: &generator) ? nil : DestinationRoute(
                interface: text(&generator), index: Int.random(in: 1...100_000, using: &generator),
                family: Bool.random(using: &generator) ? .ipv4 : .ipv6,
                gateway: Bool.random(using: &generator) ? nil : text(&generator),
                table: UInt32.random(in: 0...UInt32.max, using: &generator), source: text(&generator))
        }
        let states: [DestinationState] = [.reachable, .unreachable, .unresolved, .pending, .unrecognized("x\"y")]
        let reasons: [DestinationReason?] = [nil, .route(.noRoute), .nxdomain, .timeout, .unrecognized("new\nreason")]
        status.watched = (0..<Int.random(in: 0...3, using: &generator)).map { _ in
            DestinationStatus(
                id: Bool.random(using: &generator) ? nil : text(&generator), target: text(&generator),
                host: text(&generator), port: Int.random(in: 1...65535, using: &generator),
                state: states.randomElement(using: &generator)!, reason: reasons.randomElement(using: &generator)!,
                via: route(),
                addresses: (0..<Int.random(in: 0...2, using: &generator)).map { _ in
                    AddressReachability(
                        address: text(&generator), family: .ipv6, state: states.randomElement(using: &generator)!,
                        reason: reasons.randomElement(using: &generator)!, via: route())
                },
                seq: UInt64.random(in: 0...UInt64.max, using: &generator), source: .daemon)
        }
        // Name resolution, with every optional key of a server both ways.
        let dnsStates = DNSState.allCases + [.unrecognized("new\"state")]
        status.dns = DNSStatus(
            state: dnsStates.randomElement(using: &generator)!,
            servers: (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                DNSServer(
                    address: text(&generator), state: states.randomElement(using: &generator)!,
                    reason: Bool.random(using: &generator) ? nil : UnreachableReason.allCases.randomElement(using: &generator)!,
                    interface: Bool.random(using: &generator) ? nil : text(&generator))
            })
        // Every kind of change, each of its optional fields both ways.
        status.changes = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
            let family = Bool.random(using: &generator) ? AddressFamily.ipv4 : .ipv6
            func level() -> ReachabilityLevel { ReachabilityLevel.allCases.randomElement(using: &generator)! }
            func verdict() -> Connectivity { Connectivity.allCases.randomElement(using: &generator)! }
            let kinds: [StatusChange] = [
                .path(family, from: path(family), to: path(family)),
                .reachability(family, from: level(), to: level()),
                .connectivity(from: verdict(), to: verdict()),
                .dns(from: dnsStates.randomElement(using: &generator)!, to: dnsStates.randomElement(using: &generator)!),
                .metered(from: Bool.random(using: &generator), to: Bool.random(using: &generator)),
                .portalURL,
                .interfaces(
                    links: (0..<Int.random(in: 0...3, using: &generator)).map { _ in text(&generator) },
                    more: Bool.random(using: &generator) ? 0 : Int.random(in: 1...1000, using: &generator)),
                .watched(
                    target: text(&generator), from: Bool.random(using: &generator) ? nil : states.randomElement(using: &generator)!,
                    to: states.randomElement(using: &generator)!),
                .unrecognized(kind: text(&generator)),
            ]
            return kinds.randomElement(using: &generator)!
        }
        // Any namespace, a daemon's that predates them included.
        if Bool.random(using: &generator) {
            status.network = NetworkNamespace(
                inode: UInt64.random(in: 0...UInt64.max, using: &generator), device: UInt64.random(in: 0...255, using: &generator),
                cookie: Bool.random(using: &generator) ? nil : UInt64.random(in: 0...UInt64.max, using: &generator))
        }
        return status
    }

    @Test func everyStatusEncodesToTheBytesCodableWrites() throws {
        var generator = SeededGenerator(seed: 11)
        for run in 0..<1000 {
            // A summary (no interface list, a "detail" key) every third run.
            let status = Self.status(&generator)
            let message = DaemonMessage.status(run % 3 == 0 ? status.summary() : status)
            let written = message.line(), reference = message.lineThroughCodable()
            guard written == reference else {
                Issue.record("""
                    run \(run) differs:
                    \(String(decoding: written, as: UTF8.self))\(String(decoding: reference, as: UTF8.self))
                    """)
                return
            }
        }
    }

    /// Through a memo, as the daemon and `monitor --json` in-process write
    /// one status after another: the bytes written without one, the links'
    /// taken from the memo exactly when the list is the one written last.
    @Test func aMemoReusesTheLinksBytesOnlyForTheListWrittenLast() {
        var generator = SeededGenerator(seed: 14)
        var memo = StatusLineMemo()
        var previous = Self.status(&generator)
        var lastWritten: [InterfaceStatus]?
        var reusable = 0
        for run in 0..<1000 {
            var status = Self.status(&generator)
            // Most changes leave the links as they were (a route's): the
            // same array, or an equal one built anew.
            switch run % 4 {
            case 0: status.interfaces = previous.interfaces
            case 1: status.interfaces = previous.interfaces.map { $0 }
            case 2: status.interfaces = previous.interfaces.dropLast() + previous.interfaces.suffix(1).map { link in
                    var renamed = link
                    renamed.name += "x"
                    return renamed
                }
            default: break
            }
            if run % 5 == 0 { status = status.summary() }
            let written = StatusLineWriter.line(status, memo: &memo)
            guard written == StatusLineWriter.line(status) else {
                Issue.record("run \(run) differs:\n\(String(decoding: written, as: UTF8.self))")
                return
            }
            if !status.isSummary {
                if lastWritten == status.interfaces { reusable += 1 }
                lastWritten = status.interfaces
            }
            previous = status
        }
        #expect(memo.reuses == reusable)
        #expect(reusable > 300, "the runs reuse the links")
    }

    /// The calendar against Foundation's formatter, on whole seconds; the
    /// milliseconds against the integer they came from. Foundation's own
    /// milliseconds round down too: for about half of all whole-millisecond
    /// instants it writes the millisecond before.
    @Test func timestampsAreTheFormattersToTheMillisecond() {
        var generator = SeededGenerator(seed: 12)
        for _ in 0..<2000 {
            let milliseconds = Int64.random(in: 0...4_102_444_800_000, using: &generator)
            let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
            let wholeSecond = Timestamp.formatThroughFoundation(Date(timeIntervalSince1970: Double(seconds)))
            let digits = String(fraction)
            let expected = wholeSecond.replacingOccurrences(
                of: ".000Z", with: "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z")
            #expect(Timestamp.format(Date(timeIntervalSince1970: Double(milliseconds) / 1000)) == expected, "\(milliseconds) ms")
        }
    }

    /// Decoding a status and encoding it again kept its `changed_at` only
    /// about half the time: formatting rounded down, and a parsed ".123" is a
    /// Double just below it.
    @Test func aTimestampSurvivesParsingAndFormattingAgain() throws {
        #expect(Timestamp.format(try #require(Timestamp.parse("2026-11-21T05:10:00.123Z"))) == "2026-11-21T05:10:00.123Z")
        var generator = SeededGenerator(seed: 13)
        for _ in 0..<2000 {
            let date = Date(timeIntervalSince1970: Double.random(in: 0...4_102_444_800, using: &generator))
            let text = Timestamp.format(date)
            #expect(Timestamp.parse(text).map(Timestamp.format) == text)
        }
        #expect(Timestamp.format(Date(timeIntervalSince1970: 59.9996)) == "1970-01-01T00:01:00.000Z", "carries into the next second")
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.0004)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    /// Parsed as formatted: proleptic Gregorian, UTC, milliseconds.
    @Test func timestampsParseAsTheProtocolWritesThem() throws {
        // libFuzzer's find: Foundation's parser is Julian before 1582.
        let old = "1013-11-27T05:10:00.123Z"
        #expect(Timestamp.parse(old).map(Timestamp.format) == old)
        #expect(Timestamp.parse("2026-11-21t05:10:00.1234567z").map(Timestamp.format) == "2026-11-21T05:10:00.123Z")
        #expect(Timestamp.parse("2026-11-21T05:10:00Z").map(Timestamp.format) == "2026-11-21T05:10:00.000Z")
        #expect(Timestamp.parse("2026-11-21T05:10:00.9996Z").map(Timestamp.format) == "2026-11-21T05:10:01.000Z")
        #expect(Timestamp.parse("2016-12-31T23:59:60Z").map(Timestamp.format) == "2017-01-01T00:00:00.000Z", "a leap second")
        for bad in ["2026-02-30T00:00:00Z", "2026-02-30T00:00:60Z", "2026-02-28T00:00:61Z", "2026-11-21T05:10:00+01:00", "2026-11-21 05:10:00Z", "2026-13-01T00:00:00Z",
                    "2026-11-21T24:00:00Z", "2026-11-21T05:10:00.Z", "2026-11-21T05:10:00.12aZ", "", "garbage"] {
            #expect(Timestamp.parse(bad) == nil, "\(bad)")
        }
    }
}
