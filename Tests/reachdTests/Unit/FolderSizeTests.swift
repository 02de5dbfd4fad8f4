import Foundation
import Testing
import TestSupport

/// Issue 46's bounds on the rooms, held: no file in the library's Client/
/// over 350 lines, none in the daemon's Daemon/ over 250, and the client no
/// more than 1.8 times the monitor it follows in code lines. The client
/// had grown to 2.13 times, with three connect paths and two readers of
/// daemon lines; what it adds now should be a rule of the client's, not
/// a second copy of something.
@Suite("The size of the rooms")
struct FolderSizeTests {
    static let longestClientFile = 350
    static let longestDaemonFile = 250
    static let clientToMonitor = 1.8

    /// Each Swift file's lines in `folder` (under Sources) and the folders
    /// in it, by path within `folder`.
    static func lines(in folder: String) throws -> [String: [Substring]] {
        let root = TestInstallation.packageRoot.appendingPathComponent("Sources/\(folder)")
        let names = (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".swift") }
        return try Dictionary(uniqueKeysWithValues: names.map { name in
            let text = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
            return (name, text.split(separator: "\n", omittingEmptySubsequences: false).dropLast())
        })
    }

    /// Lines that are neither blank nor a comment: the plain count issue 46 measured by.
    static func codeLines(in folder: String) throws -> Int {
        try lines(in: folder).values.joined().filter { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return !trimmed.isEmpty && !trimmed.hasPrefix("//")
        }.count
    }

    @Test(arguments: [("Reachability/Client", longestClientFile), ("reachd/Daemon", longestDaemonFile)])
    func noFileIsLongerThanItsFoldersBound(folder: String, bound: Int) throws {
        let files = try Self.lines(in: folder)
        #expect(files.count > 5, "the test reads \(folder): \(files.keys.sorted())")
        for (name, lines) in files.sorted(by: { $0.key < $1.key }) {
            #expect(lines.count <= bound, "\(folder)/\(name) has \(lines.count) lines; the bound is \(bound): split it by concern")
        }
    }

    @Test func theClientIsNoMoreThanItsBoundTimesTheMonitor() throws {
        let client = try Self.codeLines(in: "Reachability/Client")
        let monitor = try Self.codeLines(in: "Reachability/Monitor")
        #expect(monitor > 500 && client > 1000, "the test reads both: Monitor/ \(monitor), Client/ \(client) code lines")
        #expect(
            Double(client) <= Self.clientToMonitor * Double(monitor),
            "Client/ has \(client) code lines, Monitor/ \(monitor): \(Double(client) / Double(monitor)) times, over \(Self.clientToMonitor)")
    }
}
