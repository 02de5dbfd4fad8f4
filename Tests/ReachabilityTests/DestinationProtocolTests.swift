import Foundation
import Testing
import TestSupport
@testable import Reachability

/// The destination requests and answers on the wire: what the daemon
/// accepts, and what a client makes of a newer daemon's answers.
@Suite("Destination protocol")
struct DestinationProtocolTests {
    static func parse(_ line: String) -> Result<ClientRequest, RequestError> {
        ClientRequest.parse(Array(line.utf8))
    }

    @Test func requestsParseAndSpellThemselvesTheSame() throws {
        let watch = try Self.parse(#"{"op":"watch","id":"api","target":"[fd00::10]:8443","family":"ipv6"}"#).get()
        #expect(watch.operation == .watch && watch.id == "api" && watch.family == .ipv6)
        #expect(watch.destination == (try Destination(host: "fd00::10", port: 8443)))
        #expect(try Self.parse(String(decoding: watch.line.dropLast(), as: UTF8.self)).get() == watch)
        let reach = try Self.parse(#"{"op":"reach","target":"api.example.com"}"#).get()
        #expect(reach.destination?.port == 443 && reach.id == nil)
        // A URL, as `reachd reach` takes it: its server.
        let url = try Self.parse(#"{"op":"reach","target":"http://x.test/"}"#).get()
        #expect(url.destination == (try Destination(host: "x.test", port: 80)))
        #expect(try Self.parse(#"{"op":"unwatch","id":"api"}"#).get() == ClientRequest(.unwatch, id: "api"))
    }

    @Test(arguments: [
        (#"{"op":"watch","target":"a.example"}"#, "needs an \"id\""),
        (#"{"op":"unwatch"}"#, "needs an \"id\""),
        (#"{"op":"reach"}"#, "needs a \"target\""),
        (#"{"op":"watch","id":"","target":"a.example"}"#, "1 to 64 bytes"),
        (#"{"op":"reach","target":"a.example","family":"ipx"}"#, "unknown family \"ipx\""),
    ])
    func malformedRequestsCloseTheConnection(line: String, message: String) {
        guard case .failure(let error) = Self.parse(line) else {
            Issue.record("accepted \(line)")
            return
        }
        #expect(error.code == "bad_request" && error.closesConnection && error.message.contains(message), "\(error)")
    }

    @Test(arguments: [
        (#"{"op":"watch","id":"w","target":""}"#, "the host is empty"),
        (#"{"op":"watch","id":"w","target":"a.example:0"}"#, "port \"0\""),
        (#"{"op":"watch","id":"w","target":"a.example:65536"}"#, "port \"65536\""),
        (#"{"op":"reach","id":"r","target":"a\u001b[31m.example"}"#, #"a\x1b[31m"#),
    ])
    func badTargetsAreAnsweredWithTheirIDAndKeepTheConnection(line: String, message: String) {
        guard case .failure(let error) = Self.parse(line) else {
            Issue.record("accepted \(line)")
            return
        }
        #expect(error.code == "bad_destination" && !error.closesConnection && error.message.contains(message), "\(error)")
        #expect(error.id != nil && String(decoding: error.line, as: UTF8.self).contains(#""id":"#))
        #expect(!error.message.unicodeScalars.contains { $0.properties.generalCategory == .control })
    }

    @Test func aLongNameIsRefusedByLength() {
        let line = #"{"op":"watch","id":"w","target":"\#(String(repeating: "a.", count: 127))com"}"#
        guard case .failure(let error) = Self.parse(line) else {
            Issue.record("accepted a 257-byte name")
            return
        }
        #expect(error.message.contains("257 bytes"), "\(error.message)")
    }

    /// A newer daemon's states, reasons and keys are cases, not failures.
    @Test func aNewerDaemonsAnswerDecodes() throws {
        let line = #"{"type":"destination","version":1,"id":"w","target":"a.example:443","host":"a.example","port":443,"state":"flapping","reason":"quantum_noise","via":null,"addresses":[{"address":"192.0.2.1","family":"ipv4","state":"flapping","reason":"quantum_noise","via":null,"rtt":3}],"seq":7,"source":"daemon","new_key":{"x":1}}"#
        guard case .destination(let status) = try DaemonMessage.decode(Array(line.utf8)) else {
            Issue.record("not a destination")
            return
        }
        #expect(status.state == .unrecognized("flapping") && !status.isReachable)
        #expect(status.reason == .unrecognized("quantum_noise"))
        #expect(status.addresses.first?.state == .unrecognized("flapping"))
    }

    @Test func anAnswerRoundTripsWithEveryKeyPresent() throws {
        let status = DestinationStatus(
            id: nil, target: "[fd00::10]:443", host: "fd00::10", port: 443, state: .unreachable,
            reason: .route(.noRoute), via: nil,
            addresses: [AddressReachability(address: "fd00::10", family: .ipv6, state: .unreachable, reason: .route(.noRoute), via: nil)],
            seq: 3, source: .inProcess)
        let line = DaemonMessage.destination(status).line()
        let text = String(decoding: line, as: UTF8.self)
        for key in ["\"id\":null", "\"via\":null", "\"reason\":\"no_route\"", "\"type\":\"destination\"", "\"version\":1"] {
            #expect(text.contains(key), "\(key) in \(text)")
        }
        #expect(try DaemonMessage.decode(line.dropLast()) == .destination(status))
    }

    /// The answer in docs/PROTOCOL.md is byte for byte what a daemon writes,
    /// and the document names every key of an answer.
    @Test func theDocumentedAnswerIsWhatTheDaemonWrites() throws {
        let document = try String(contentsOf: packageRoot.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        let example = try #require(document.split(separator: "\n").first { $0.hasPrefix(#"{"addresses""#) })
        guard case .destination(let status) = try DaemonMessage.decode(Array(example.utf8)) else {
            Issue.record("the documented answer is not a destination")
            return
        }
        #expect(status.isReachable && status.via?.table == 51820)
        #expect(DaemonMessage.destination(status).line() == Array(example.utf8) + [10])
        let keys = ["type", "version", "id", "target", "host", "port", "state", "reason", "via", "addresses", "seq",
                    "source", "interface", "index", "family", "gateway", "table", "address"]
        for key in keys { #expect(document.contains("`\(key)`"), "\(key) is not in docs/PROTOCOL.md") }
        for value in DestinationState.allCases.map(\.rawValue) + DestinationReason.allCases.map(\.rawValue) {
            #expect(document.contains("`\(value)`"), "\(value) is not in docs/PROTOCOL.md")
        }
    }

    /// Seeded random destination requests, with hostile ids and targets: the
    /// parser never traps, accepts only what is whole, and escapes what it
    /// repeats.
    @Test(arguments: [21, 22, 23] as [UInt64])
    func fuzzedDestinationRequestsGetARequestOrAReason(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        let ops = ["reach", "watch", "unwatch", "get", "watch"]
        // Half the targets are whole, so that the accepting branch is taken too.
        let wholeTargets = ["10.1.2.3:80", "api.example.com", "[fd00::1]:8443", "fd00::2"]
        var acceptedDestinations = 0
        for _ in 0..<2_000 {
            var object: [String: Any] = ["op": ops[Int(generator.next() % UInt64(ops.count))]]
            if generator.next() % 4 != 0 { object["id"] = String(decoding: generator.bytes(maxLength: 80), as: UTF8.self) }
            if generator.next() % 4 != 0 {
                object["target"] = generator.next() % 2 == 0
                    ? wholeTargets[Int(generator.next() % UInt64(wholeTargets.count))]
                    : String(decoding: generator.bytes(maxLength: 40), as: UTF8.self)
            }
            if generator.next() % 3 == 0 { object["family"] = ["ipv4", "ipv6", "x"][Int(generator.next() % 3)] }
            let line = try JSONSerialization.data(withJSONObject: object)
            switch ClientRequest.parse(Array(line)) {
            case .success(let request):
                switch request.operation {
                case .reach:
                    #expect(request.destination != nil)
                    acceptedDestinations += 1
                case .watch:
                    #expect(request.destination != nil && request.id != nil)
                    acceptedDestinations += 1
                case .unwatch: #expect(request.id != nil)
                case .get, .subscribe, .check: break
                }
                #expect((request.id?.utf8.count ?? 0) <= ClientRequest.maximumIDLength)
            case .failure(let error):
                #expect(!error.message.isEmpty)
                #expect(!error.message.unicodeScalars.contains { $0.properties.generalCategory == .control },
                        "\(error.message.debugDescription)")
            }
        }
        #expect(acceptedDestinations > 0, "the fuzz reached the accepting branch")
    }
}
