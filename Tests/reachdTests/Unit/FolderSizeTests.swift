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

    /// The Swift files of `folder` (and the folders in it) in `module`, read
    /// as the folder-dependency test reads them.
    static func files(
        _ folder: String, of module: String
    ) throws -> [(folder: String, name: String, code: String, lines: Int)] {
        let root = TestInstallation.packageRoot.appendingPathComponent("Sources/\(module)")
        return try FolderDependencyTests.files(under: root).filter { $0.folder == folder }
    }

    /// Lines that are neither blank nor a comment: the plain count issue 46 measured by.
    static func codeLines(in folder: String) throws -> Int {
        try files(folder, of: "Reachability").map { file in
            file.code.split(separator: "\n").count { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        }.reduce(0, +)
    }

    @Test(arguments: [("Reachability", "Client", longestClientFile), ("reachd", "Daemon", longestDaemonFile)])
    func noFileIsLongerThanItsFoldersBound(module: String, folder: String, bound: Int) throws {
        let files = try Self.files(folder, of: module)
        #expect(files.count > 5, "the test reads \(module)/\(folder): \(files.map(\.name))")
        for file in files {
            #expect(file.lines <= bound, "\(module)/\(file.name) has \(file.lines) lines; the bound is \(bound): split it by concern")
        }
    }

    @Test func theClientIsNoMoreThanItsBoundTimesTheMonitor() throws {
        let client = try Self.codeLines(in: "Client")
        let monitor = try Self.codeLines(in: "Monitor")
        #expect(monitor > 500 && client > 1000, "the test reads both: Monitor/ \(monitor), Client/ \(client) code lines")
        #expect(
            Double(client) <= Self.clientToMonitor * Double(monitor),
            "Client/ has \(client) code lines, Monitor/ \(monitor): \(Double(client) / Double(monitor)) times, over \(Self.clientToMonitor)")
    }
}
