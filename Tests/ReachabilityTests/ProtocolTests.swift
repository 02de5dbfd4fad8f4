import Foundation
import Testing
import TestSupport
@testable import Reachability

@Suite("Wire protocol v1")
struct ProtocolTests {
    static let sample = NetworkStatus.built(
        ipv4: .through(NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1")),
        ipv6: .noRoute(.local),
        interfaces: [
            InterfaceStatus(
                name: "lo", index: 1, up: true, carrier: true, operstate: "unknown", loopback: true,
                addresses: [InterfaceAddress(address: "127.0.0.1", prefix: 8, family: .ipv4, scope: "host")]),
            InterfaceStatus(
                name: "eth0", index: 2, up: true, carrier: true, operstate: "up", loopback: false,
                addresses: [InterfaceAddress(address: "192.0.2.10", prefix: 24, family: .ipv4, scope: "global")]),
        ],
        seq: 7, changedAt: Date(timeIntervalSince1970: 1_790_000_000.25))

    private func object(_ line: [UInt8]) throws -> [String: Any] {
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false, "one object per line")
        return try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
    }

    @Test func aStatusLineHasEveryDocumentedKey() throws {
        let json = try object(DaemonMessage.status(Self.sample).line())
        #expect(json["type"] as? String == "status")
        #expect(json["version"] as? Int == 1)
        #expect(json["online"] as? Bool == true)
        #expect(json["reachability"] as? String == "online")
        #expect(json["ipv4"] as? String == "online")
        #expect(json["ipv6"] as? String == "local")
        #expect(json["connectivity"] as? String == "unknown")
        #expect(json["portal_url"] is NSNull, "present, and null without a portal")
        #expect(json["seq"] as? Int == 7)
        #expect(json["changed_at"] as? String == "2026-09-21T14:13:20.250Z")
        #expect(json["source"] as? String == "daemon")
        let primary = try #require(json["primary"] as? [String: Any])
        #expect(primary["interface"] as? String == "eth0")
        #expect(primary["index"] as? Int == 2)
        #expect(primary["family"] as? String == "ipv4")
        #expect(primary["gateway"] as? String == "192.0.2.1")
        let interfaces = try #require(json["interfaces"] as? [[String: Any]])
        #expect(Set(interfaces[1].keys) == ["name", "index", "up", "carrier", "operstate", "loopback", "addresses", "metered"])
        #expect(json["metered"] as? Bool == false)
        let address = try #require((interfaces[1]["addresses"] as? [[String: Any]])?.first)
        #expect(Set(address.keys) == ["address", "prefix", "family", "scope"])
    }

    @Test func everyKeyOfAStatusIsInTheProtocolDocument() throws {
        let document = try String(
            contentsOf: packageRoot.appendingPathComponent("docs/PROTOCOL.md"),
            encoding: .utf8)
        let json = try object(DaemonMessage.status(Self.sample).line())
        for key in json.keys {
            #expect(document.contains("`\(key)`") || document.contains("\"\(key)\""), "\(key) is not in docs/PROTOCOL.md")
        }
    }

    /// The full status in the document, pretty-printed there, is one a client reads.
    @Test func theDocumentedStatusDecodes() throws {
        let document = try String(contentsOf: packageRoot.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        let section = try #require(document.range(of: "## Statuses\n"))
        let start = try #require(document.range(of: "```json\n", range: section.upperBound..<document.endIndex))
        let end = try #require(document.range(of: "```", range: start.upperBound..<document.endIndex))
        let object = try JSONSerialization.jsonObject(with: Data(document[start.upperBound..<end.lowerBound].utf8))
        let line = try JSONSerialization.data(withJSONObject: object)
        guard case .status(let status) = try DaemonMessage.decode(Array(line)) else {
            Issue.record("not a status")
            return
        }
        #expect(status.online && status.interfaces.count == 2)
        #expect(status.watched.map(\.target) == ["db.internal:5432"] && status.watched.first?.via?.table == 254)
    }

    /// The summary in the document is byte for byte what a daemon writes.
    @Test func theDocumentedSummaryIsWhatTheDaemonWrites() throws {
        let document = try String(
            contentsOf: packageRoot.appendingPathComponent("docs/PROTOCOL.md"),
            encoding: .utf8)
        let example = try #require(document.split(separator: "\n").first { $0.hasPrefix("{") && $0.contains(#""detail":"summary""#) })
        guard case .status(let summary) = try DaemonMessage.decode(Array(example.utf8)) else {
            Issue.record("the documented summary is not a status")
            return
        }
        #expect(summary.isSummary && summary.online)
        #expect(DaemonMessage.status(summary).line() == Array(example.utf8) + [10])
    }

    @Test func absentValuesAreExplicitNulls() throws {
        var offline = Self.sample
        offline.ipv4 = FamilyStatus(reachability: .local, reason: .noRoute, path: nil)
        let json = try object(DaemonMessage.status(offline).line())
        #expect(json["primary"] is NSNull)
        #expect(json["online"] as? Bool == false)
        let onLink = DaemonMessage.status(NetworkStatus.built(
            ipv4: .through(NetworkPath(interface: "wg0", index: 5, family: .ipv4, gateway: nil)),
            ipv6: offline.ipv6, changedAt: Date(), source: .inProcess))
        let primary = try #require(try object(onLink.line())["primary"] as? [String: Any])
        #expect(primary["gateway"] is NSNull)
    }

    @Test func statusesRoundTrip() throws {
        let line = DaemonMessage.status(Self.sample).line()
        #expect(try DaemonMessage.decode(line.dropLast()) == .status(Self.sample))
    }

    @Test func theSameStatusEncodesToTheSameBytes() {
        #expect(DaemonMessage.status(Self.sample).line() == DaemonMessage.status(Self.sample).line())
    }

    @Test func clientsIgnoreKeysTheyDoNotKnow() throws {
        var json = try object(DaemonMessage.status(Self.sample).line())
        json["captive_portal_url"] = "http://example.invalid/"
        json["families"] = (json["families"] as? [String: Any]).map { families in
            families.merging(["ipv8": ["reachability": "online"]]) { old, _ in old }
        }
        let line = try JSONSerialization.data(withJSONObject: json)
        #expect(try DaemonMessage.decode(Array(line)) == .status(Self.sample))
    }

    @Test func anotherVersionIsAMismatchNotACrash() {
        let line = Array(#"{"type":"status","version":2,"whatever":true}"#.utf8)
        #expect(throws: ProtocolError.versionMismatch(received: 2)) { try DaemonMessage.decode(line) }
        #expect(ProtocolError.versionMismatch(received: 2).description.contains("version 2"))
    }

    @Test func errorsDecode() throws {
        let line = DaemonMessage.error(code: "bad_request", message: "unknown op \"x\"").line()
        let json = try object(line)
        #expect(json["type"] as? String == "error")
        #expect(json["version"] as? Int == 1)
        #expect(try DaemonMessage.decode(line.dropLast()) == .error(code: "bad_request", message: "unknown op \"x\""))
        let identified = DaemonMessage.error(code: "bad_destination", message: "no", id: "api")
        #expect(try DaemonMessage.decode(identified.line().dropLast()) == identified, "the id of the request it refuses")
        #expect(try !object(line).keys.contains("id"), "no id key without an id")
    }

    /// Envelope and payload are read in one pass of the decoder; each fault
    /// still says which it was.
    @Test func aMalformedLineSaysWhatWasWrong() {
        func said(_ text: String) -> String {
            do {
                _ = try DaemonMessage.decode(Array(text.utf8))
                return "decoded"
            } catch {
                return error.description
            }
        }
        #expect(said("not json").contains(#"expected a JSON object with "type" and "version", got: not json"#))
        #expect(said(#"{"version":1}"#).contains("expected a JSON object"))
        #expect(said(#"{"type":"status","version":1,"ipv4":7}"#).contains("status message does not decode"))
        #expect(said(#"{"type":"destination","version":1}"#).contains("destination message does not decode"))
        #expect(said(#"{"type":"news","version":1}"#) == "decoded", "a type this version does not know")
    }

    @Test func garbageFromTheDaemonIsMalformed() {
        #expect(throws: ProtocolError.self) { try DaemonMessage.decode(Array("not json".utf8)) }
        #expect(throws: ProtocolError.self) { try DaemonMessage.decode(Array(#"{"type":"status","version":1}"#.utf8)) }
    }

    @Test(arguments: [
        (#"{"op":"get"}"#, ClientRequest.get), (#"{"op":"subscribe","extra":1}"#, .subscribe),
        (#"{"op":"subscribe","detail":"summary"}"#, ClientRequest(.subscribe, detail: .summary)),
        (#"{"detail":"full","op":"check"}"#, .check),
    ])
    func validRequests(line: String, request: ClientRequest) throws {
        let parsed = try ClientRequest.parse(Array(line.utf8)).get()
        #expect(parsed == request)
    }

    @Test(arguments: [
        (#"{"op":"launch"}"#, "unknown op \"launch\""),
        (#"{"operation":"get"}"#, "no \"op\""),
        ("get", "not a JSON object"),
        ("[1,2]", "not a JSON object"),
        (#"{"op":5}"#, "not a JSON object"),
        (#"{"op":"subscribe","detail":"interfaces"}"#, "unknown detail \"interfaces\"; expected \"full\" or \"summary\""),
        (#"{"op":"subscribe","detail":1}"#, "not a JSON object"),
    ])
    func badRequestsSayWhatWasWrong(line: String, fragment: String) throws {
        guard case .failure(let error) = ClientRequest.parse(Array(line.utf8)) else {
            Issue.record("\(line) was accepted")
            return
        }
        #expect(error.message.contains(fragment))
    }

    /// A status renumbered by a client (a source that numbers below what it
    /// delivered) keeps every other byte: a key a newer daemon added, and
    /// the watched targets' own `seq`.
    @Test func aRenumberedLineKeepsEveryOtherByte() throws {
        var status = Self.sample
        status.seq = 7
        status.watched = [DestinationStatus(
            id: nil, target: "db:5432", host: "db", port: 5432, state: .pending, reason: nil, via: nil, addresses: [],
            seq: 3, source: .daemon)]
        let line = Array(DaemonMessage.status(status).line().dropLast())
        let newer = Array(String(decoding: line, as: UTF8.self).replacingOccurrences(of: #""type":"status""#, with: #""type":"status","vpn":{"seq":1}"#).utf8)
        let renumbered = try #require(StatusLineLayout.line(newer, renumberedTo: 123_456))
        #expect(String(decoding: renumbered, as: UTF8.self) == String(decoding: newer, as: UTF8.self)
            .replacingOccurrences(of: #""seq":7,"#, with: #""seq":123456,"#))
        guard case .status(let decoded) = try DaemonMessage.decode(renumbered) else { throw ProtocolError.malformed("not a status") }
        #expect(decoded.seq == 123_456 && decoded.watched.first?.seq == 3)
        #expect(StatusLineLayout.line(Array(#"{"type":"error"}"#.utf8), renumberedTo: 1) == nil)
    }

    /// A client that guessed wrong learns every operation there is, in
    /// both errors that list them, and PROTOCOL.md's sample says the same.
    @Test func anOpErrorListsEveryOperation() throws {
        for line in [#"{"op":"reboot"}"#, #"{"operation":"get"}"#] {
            guard case .failure(let error) = ClientRequest.parse(Array(line.utf8)) else {
                Issue.record("\(line) was accepted")
                continue
            }
            for operation in ClientRequest.Operation.allCases {
                #expect(error.message.contains("\"\(operation.rawValue)\""), "\(line): \(error.message)")
            }
        }
        guard case .failure(let error) = ClientRequest.parse(Array(#"{"op":"reboot"}"#.utf8)) else {
            Issue.record("an unknown operation was accepted")
            return
        }
        let protocolDocument = try String(contentsOf: packageRoot.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        #expect(protocolDocument.contains(String(decoding: error.line.dropLast(), as: UTF8.self)))
    }

    @Test func invalidUTF8IsRejectedAsSuch() throws {
        guard case .failure(let error) = ClientRequest.parse([0x7b, 0xff, 0xfe, 0x7d]) else {
            Issue.record("invalid UTF-8 was accepted")
            return
        }
        #expect(error.message.contains("UTF-8"))
    }

    @Test func requestLinesAreWhatTheDocsShow() throws {
        #expect(String(decoding: ClientRequest.subscribe.line, as: UTF8.self) == "{\"op\":\"subscribe\"}\n")
        #expect(String(decoding: ClientRequest(.subscribe, detail: .summary).line, as: UTF8.self)
            == "{\"op\":\"subscribe\",\"detail\":\"summary\"}\n")
        // Destination requests are DestinationProtocolTests'.
        for operation in [ClientRequest.Operation.get, .subscribe, .check] {
            for detail in StatusDetail.allCases {
                let request = ClientRequest(operation, detail: detail)
                #expect(try ClientRequest.parse(request.line.dropLast()).get() == request)
            }
        }
    }

    /// A summary keeps everything but the interface list, says it is one, and
    /// survives the wire; the metering it can no longer derive is carried.
    @Test func aSummaryIsTheStatusWithoutItsInterfaceList() throws {
        let wlan = InterfaceStatus(
            name: "wlan0", index: 3, up: true, carrier: true, operstate: "up", loopback: false,
            addresses: [InterfaceAddress(address: "10.0.0.2", prefix: 24, family: .ipv4, scope: "global")], metered: .yes)
        let path = NetworkPath(interface: "wlan0", index: 3, family: .ipv4, gateway: "10.0.0.1")
        let full = NetworkStatus.built(
            ipv4: .through(path), interfaces: [wlan], seq: 7, changedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let summary = full.summary()
        #expect(summary.isSummary && !full.isSummary)
        #expect(summary.interfaces.isEmpty && summary.metered && full.metered)
        #expect(summary.hasSameSummary(as: full) && !summary.describesSameNetwork(as: full))
        #expect(summary.summary() == summary && full.detailed(.full) == full && full.detailed(.summary) == summary)

        let line = DaemonMessage.status(summary).line()
        let json = try object(line)
        #expect(json["interfaces"] == nil)
        #expect(json["detail"] as? String == "summary")
        #expect(json["metered"] as? Bool == true)
        #expect(try DaemonMessage.decode(line.dropLast()) == .status(summary))
        #expect(try DaemonMessage.decode(DaemonMessage.status(full).line().dropLast()) == .status(full))

        var moved = full
        moved.interfaces.append(InterfaceStatus(
            name: "veth0", index: 9, up: false, carrier: false, operstate: "down", loopback: false, addresses: [], metered: .no))
        #expect(moved.hasSameSummary(as: full) && !moved.describesSameNetwork(as: full), "a new veth is no news to a summary")
        var unmetered = full
        unmetered.interfaces[0].metered = .no
        #expect(!unmetered.hasSameSummary(as: full), "the primary path's metering is")
    }
}

@Suite("Line framing")
struct LineBufferTests {
    @Test func splitsOnNewlinesAcrossChunks() throws {
        var buffer = LineBuffer(limit: 16)
        #expect(try buffer.append(Array("ab".utf8)).isEmpty)
        #expect(try buffer.append(Array("c\nde\r\nf".utf8)) == [Array("abc".utf8), Array("de".utf8)])
        #expect(buffer.hasPartialLine)
    }

    @Test func refusesALineOverTheLimitBeforeItEnds() {
        var buffer = LineBuffer(limit: 4096)
        #expect(throws: LineBuffer.Failure.lineTooLong(limit: 4096)) {
            _ = try buffer.append([UInt8](repeating: UInt8(ascii: "a"), count: 4097))
        }
    }

    @Test func aLineOfExactlyTheLimitIsAccepted() throws {
        var buffer = LineBuffer(limit: 4096)
        let lines = try buffer.append([UInt8](repeating: UInt8(ascii: "a"), count: 4096) + [UInt8(ascii: "\n")])
        #expect(lines.first?.count == 4096)
    }

    /// The framing as a byte at a time defines it: a line's bytes, its
    /// `\r` included, held to the limit as they come; a newline ends it,
    /// less one `\r` before it.
    static func byteByByte(_ stream: [UInt8], limit: Int) -> (lines: [[UInt8]], partial: Bool)? {
        var lines: [[UInt8]] = [], pending: [UInt8] = []
        for byte in stream {
            if byte == UInt8(ascii: "\n") {
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                lines.append(pending)
                pending = []
            } else {
                guard pending.count < limit else { return nil }
                pending.append(byte)
            }
        }
        return (lines, !pending.isEmpty)
    }

    /// The buffer copies a segment at a time (issue 45): whatever the
    /// stream and wherever it is cut, it frames as a byte at a time does,
    /// and fails where that fails.
    @Test func segmentsFrameAsBytesDo() {
        var generator = SeededGenerator(seed: 45)
        let alphabet = Array("ab\r\n".utf8)
        for _ in 0..<2000 {
            let limit = Int.random(in: 1...12, using: &generator)
            let stream = (0..<Int.random(in: 0...80, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            let model = Self.byteByByte(stream, limit: limit)
            var buffer = LineBuffer(limit: limit)
            var rest = stream[...]
            let outcome = Result { () throws(LineBuffer.Failure) -> [[UInt8]] in
                var lines: [[UInt8]] = []
                while !rest.isEmpty {
                    let size = Int.random(in: 1...20, using: &generator)
                    lines += try buffer.append(Array(rest.prefix(size)))
                    rest = rest.dropFirst(size)
                }
                return lines
            }
            switch (model, outcome) {
            case (let model?, .success(let lines)):
                #expect(lines == model.lines && buffer.hasPartialLine == model.partial, "limit \(limit): \(stream)")
            case (nil, .failure(let failure)):
                #expect(failure == .lineTooLong(limit: limit))
            case (_?, .failure), (nil, .success):
                Issue.record("framed otherwise than a byte at a time, limit \(limit): \(stream)")
            }
        }
    }

    /// However a stream is cut into reads, the same lines come out, and a
    /// line over the limit fails wherever it is cut.
    @Test func theLinesDoNotDependOnHowTheStreamIsCut() throws {
        var generator = SeededGenerator(seed: 11)
        let alphabet = Array("ab\r\n".utf8)
        for _ in 0..<500 {
            let stream = (0..<Int.random(in: 0...60, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            var whole = LineBuffer(limit: 8), cut = LineBuffer(limit: 8)
            let expected = Result { () throws(LineBuffer.Failure) in try whole.append(stream) }
            var received: [[UInt8]] = []
            var rest = stream[...]
            let outcome = Result { () throws(LineBuffer.Failure) in
                while !rest.isEmpty {
                    let size = Int.random(in: 1...7, using: &generator)
                    received += try cut.append(rest.prefix(size))
                    rest = rest.dropFirst(size)
                }
                return received
            }
            switch (expected, outcome) {
            case (.success(let lines), .success(let cutLines)):
                #expect(lines == cutLines, "\(stream)")
                #expect(whole.hasPartialLine == cut.hasPartialLine)
            case (.failure, .failure): break
            case (.success, .failure), (.failure, .success): Issue.record("one failed, the other did not: \(stream)")
            }
            // Every line it gives is within the limit and has no line break.
            for line in (try? expected.get()) ?? [] {
                #expect(line.count <= 8 && !line.contains(UInt8(ascii: "\n")))
            }
        }
    }
}

@Suite("Publishing only changes")
struct StatusPublisherTests {
    let online = FamilyStatus(
        reachability: .online, reason: nil,
        path: NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1"))
    let local = FamilyStatus(reachability: .local, reason: .noRoute, path: nil)

    @Test func theFirstEvaluationIsPublishedWithTheFirstSequenceNumber() throws {
        var publisher = StatusPublisher(source: .daemon, firstSeq: 5_000_000)
        let published = publisher.publish(ipv4: online, ipv6: local, interfaces: [], at: Date())
        let first = try #require(published)
        #expect(first.seq == 5_000_000)
        #expect(first.source == .daemon)
        let change = publisher.publish(ipv4: local, ipv6: local, interfaces: [], at: Date())
        #expect(change?.seq == 5_000_001)
    }

    @Test func aWatcherStartsAboveEverythingAnEarlierOneCouldHavePublished() throws {
        // Microseconds since boot: a later watcher starts higher, unless the first
        // published a change every microsecond of its life.
        let first = NetworkWatcher.firstSequenceNumber()
        let later = NetworkWatcher.firstSequenceNumber()
        #expect(later >= first)
        // /proc/uptime counts the same clock (CLOCK_BOOTTIME), in seconds.
        let uptime = try #require(Double(try String(contentsOfFile: "/proc/uptime", encoding: .utf8).split(separator: " ")[0]))
        #expect(abs(Double(first) / 1_000_000 - uptime) < 2, "\(first) µs against an uptime of \(uptime) s")
    }

    @Test func aFloodThatLeavesTheAnswerAlonePublishesNothing() {
        var publisher = StatusPublisher(source: .daemon)
        _ = publisher.publish(ipv4: online, ipv6: local, interfaces: [], at: Date())
        var published = 0
        for second in 0..<100_000 where publisher.publish(
            ipv4: online, ipv6: local, interfaces: [], at: Date(timeIntervalSince1970: Double(second))) != nil {
            published += 1
        }
        #expect(published == 0)
        #expect(publisher.current?.seq == 1)
    }

    /// Watched answers ride on the host's status: a change of theirs alone is
    /// the next number; one made in the same pass as the host's change joins
    /// it under its number; later host changes keep carrying them.
    @Test func watchedAnswersJoinTheStatusOrAreTheNextChange() throws {
        var publisher = StatusPublisher(source: .daemon)
        _ = publisher.publish(ipv4: online, ipv6: local, interfaces: [], at: Date(timeIntervalSince1970: 1))
        let db = DestinationStatus(
            target: "db:5432", host: "db", port: 5432, state: .reachable, reason: nil, via: nil, addresses: [], seq: 1,
            source: .daemon)
        let alonePublished = publisher.publish(watched: [db], unsent: false, at: Date(timeIntervalSince1970: 2))
        let alone = try #require(alonePublished)
        #expect(alone.seq == 2 && alone.watched == [db] && alone.changedAt == Date(timeIntervalSince1970: 2))
        let again = publisher.publish(watched: [db], unsent: false, at: Date())
        #expect(again == nil, "the same answers are no change")
        let downPublished = publisher.publish(ipv4: local, ipv6: local, interfaces: [], at: Date(timeIntervalSince1970: 3))
        let down = try #require(downPublished)
        #expect(down.seq == 3 && down.watched == [db], "the host's change carries the answers it had")
        var gone = db
        gone.state = .unreachable
        let joinedPublished = publisher.publish(watched: [gone], unsent: true, at: Date(timeIntervalSince1970: 4))
        let joined = try #require(joinedPublished)
        #expect(joined.seq == 3 && joined.watched == [gone] && joined.changedAt == Date(timeIntervalSince1970: 3))
        #expect(publisher.current == joined)
    }

    @Test func eachChangeGetsTheNextSequenceNumberAndItsOwnTime() throws {
        var publisher = StatusPublisher(source: .inProcess)
        _ = publisher.publish(ipv4: online, ipv6: local, interfaces: [], at: Date(timeIntervalSince1970: 1))
        let published = publisher.publish(ipv4: local, ipv6: local, interfaces: [], at: Date(timeIntervalSince1970: 2))
        let down = try #require(published)
        #expect(down.seq == 2)
        #expect(down.changedAt == Date(timeIntervalSince1970: 2))
        #expect(!down.online)
        let interfaceChange = publisher.publish(
            ipv4: local, ipv6: local,
            interfaces: [InterfaceStatus(name: "eth0", index: 2, up: true, carrier: false, operstate: "down",
                                         loopback: false, addresses: [])],
            at: Date(timeIntervalSince1970: 3))
        #expect(interfaceChange?.seq == 3, "interfaces are part of the published state")
    }
}

@Suite("Socket paths")
struct SocketPathTests {
    @Test func rootUsesTheSystemPath() throws {
        #expect(try SocketPath.forDaemon(environment: [:], isRoot: true) == "/run/reachd/reachd.sock")
    }

    @Test func usersUseTheirRuntimeDirectory() throws {
        let environment = ["XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(try SocketPath.forDaemon(environment: environment, isRoot: false) == "/run/user/1000/reachd.sock")
        #expect(SocketPath.forClients(environment: environment, isRoot: false)
                == ["/run/user/1000/reachd.sock", "/run/reachd/reachd.sock"])
    }

    @Test func theEnvironmentVariableOverridesEverything() throws {
        let environment = ["REACHD_SOCKET": "/tmp/r.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(try SocketPath.forDaemon(environment: environment, isRoot: true) == "/tmp/r.sock")
        #expect(SocketPath.forClients(environment: environment, isRoot: false) == ["/tmp/r.sock"])
    }

    @Test func aUserWithoutARuntimeDirectoryIsToldWhatToDo() {
        #expect(throws: SocketPathError.self) { try SocketPath.forDaemon(environment: [:], isRoot: false) }
        #expect(SocketPathError().description.contains("--socket"))
        #expect(SocketPath.forClients(environment: [:], isRoot: false) == ["/run/reachd/reachd.sock"])
    }
}
