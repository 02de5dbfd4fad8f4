import Foundation
import Testing
import TestSupport
@testable import Reachability

/// The client spec (Tests/ClientSpec): daemon lines with what a reader must
/// conclude from each, and the client's constants. The Swift library and
/// the GIO module are one client written twice; both are held to the same
/// files here, the module through its own C driver (spec-driver.c).
@Suite("One client spec for Swift and C")
struct ClientSpecTests {
    static let directory = packageRoot.appendingPathComponent("Tests/ClientSpec")

    /// One line of the corpus and what a reader concludes from it: the
    /// kind of line, and for a status each yes-or-no of its `expect`.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let kind: String
        let conclusions: [String: Bool]
        /// Every key its `expect` states.
        let stated: Set<String>
        var testDescription: String { name }
    }

    static func cases() throws -> [Case] {
        let data = try Data(contentsOf: directory.appendingPathComponent("status-lines.json"))
        let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        return try entries.map { entry in
            let name = try #require(entry["name"] as? String)
            let expect = try #require(entry["expect"] as? [String: Any], "\(name) has no expect")
            let bytes: [UInt8]
            if let raw = entry["raw"] as? String {
                bytes = Array(raw.utf8)
            } else {
                let line = try #require(entry["line"], "\(name) has neither line nor raw")
                bytes = Array(try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]))
            }
            return Case(name: name, bytes: bytes, kind: try #require(expect["kind"] as? String, "\(name) has no kind"),
                        conclusions: expect.compactMapValues { $0 as? Bool }, stated: Set(expect.keys))
        }
    }

    /// What the library concludes, in the spec's words. `glib_connectivity`
    /// is the module's alone: GLib's property, which the library has no
    /// word for (its `online` is what that is made from).
    static func conclusions(of bytes: [UInt8]) -> [String: Any] {
        let message: DaemonMessage
        do throws(ProtocolError) {
            message = try DaemonMessage.decode(bytes)
        } catch {
            switch error {
            case .versionMismatch: return ["kind": "version"]
            case .malformed: return ["kind": "malformed"]
            }
        }
        switch message {
        case .status(let status):
            return [
                "kind": "status",
                "available": status.reachability == .online,
                "online": status.online,
                "metered": status.metered,
                "reconfigured": status.changes.contains(where: \.changesConfiguration),
                "handover": status.changes.contains {
                    if case .path(_, from: _?, to: _?) = $0 { true } else { false }
                },
            ]
        case .destination: return ["kind": "destination"]
        case .error: return ["kind": "refused"]
        case .unrecognized: return ["kind": "other"]
        }
    }

    @Test(arguments: try cases())
    func theLibraryReadsEachLineAsTheSpecSays(_ spec: Case) {
        let concluded = Self.conclusions(of: spec.bytes)
        #expect(concluded["kind"] as? String == spec.kind,
                "read as \(concluded): \(String(decoding: spec.bytes, as: UTF8.self))")
        for (key, wanted) in spec.conclusions {
            #expect(concluded[key] as? Bool == wanted, "\(key)")
        }
    }

    /// Every status case states everything a status reader concludes, so
    /// that neither driver passes a case by skipping it.
    @Test func everyStatusCaseSaysAllThatAReaderConcludes() throws {
        let keys: Set = ["kind", "available", "online", "glib_connectivity", "metered", "reconfigured", "handover"]
        let cases = try Self.cases()
        #expect(cases.count >= 20)
        for spec in cases where spec.kind == "status" {
            #expect(spec.stated == keys, "\(spec.name)")
        }
        let kinds = Set(cases.map(\.kind))
        #expect(kinds == ["status", "destination", "other", "refused", "version", "malformed"])
    }

    @Test func theLibrarysConstantsAreTheSpecs() throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent("constants.json"))
        let constants = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Int])
        func milliseconds(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }
        let backoff = Backoff()
        let ours: [String: Int] = [
            "protocol_version": ProtocolVersion.current,
            "first_retry_ms": milliseconds(backoff.delay(attempt: 0)),
            "longest_retry_ms": milliseconds(backoff.maximum),
            "stable_subscription_ms": milliseconds(DaemonDiscovery.stableSubscription),
            "liveness_probe_spacing_ms": milliseconds(DaemonLiveness.probeSpacing),
            "liveness_answer_timeout_ms": milliseconds(DaemonLiveness.answerTimeout),
            "liveness_news_grace_ms": milliseconds(DaemonLiveness.newsGrace),
        ]
        for (key, value) in ours { #expect(constants[key] == value, "\(key)") }
        // The line limit is the module's: it reads summaries, the library full statuses.
        #expect(Set(constants.keys) == Set(ours.keys).union(["summary_line_limit_bytes"]))
    }

    /// The GIO module's parser and constants, through the C driver built
    /// against the module's own files.
    @Test(.enabled(if: ClientSpecTests.canBuildTheModule, "needs cc, GLib's and json-glib's headers (make deps installs them)"))
    func theGIOModuleReadsEachLineAsTheSpecSays() throws {
        let program = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-spec-driver-\(getpid())")
        defer { try? FileManager.default.removeItem(at: program) }
        let root = packageRoot.path
        let built = try Self.shell(
            "cc -std=gnu11 -O0 -Wall -Wextra -Werror -I \"$0/Sources/ReachdGIO\" $(pkg-config --cflags gio-2.0 json-glib-1.0) "
                + "-o \"$1\" \"$0/Tests/ClientSpec/spec-driver.c\" \"$0/Sources/ReachdGIO/reachd-daemon-line.c\" "
                + "$(pkg-config --libs gio-2.0 json-glib-1.0)", root, program.path)
        try #require(built.status == 0, "\(built.output)")
        let run = try Self.shell("\"$0\" \"$1\" \"$2\"", program.path,
                                 Self.directory.appendingPathComponent("status-lines.json").path,
                                 Self.directory.appendingPathComponent("constants.json").path)
        let cases = try Self.cases().count
        #expect(run.status == 0 && run.output.contains("\(cases) cases, 0 disagreements"), "\(run.output)")
    }

    static let canBuildTheModule = (try? shell("command -v cc && pkg-config --exists gio-2.0 json-glib-1.0").status) == 0

    static func shell(_ script: String, _ arguments: String...) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
