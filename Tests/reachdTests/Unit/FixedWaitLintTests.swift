import Foundation
import Testing
import TestSupport

/// Tests wait on conditions (`eventually`, `holdsThroughout`), not for
/// fixed times: a fixed wait is too short under load and too long alone,
/// and says nothing of what it waits for. Issue 46 took them from 82 to 20;
/// what is left is mostly the pacing of traffic that tests generate
/// (a scraper, a flood, route flips) and a few waits for time itself to
/// pass (a route's lifetime, a probe schedule). The count may only fall.
@Suite("Tests that wait on conditions")
struct FixedWaitLintTests {
    /// The most fixed waits `Tests` may hold; lower it when one goes.
    static let allowed = 20

    /// Every call that sleeps for a fixed time (libc's or Python's sleep
    /// called with parentheses, or Task's), one per line: the plain grep
    /// issue 46 counts by. A shell script's sleep command is not counted,
    /// as it was not.
    static func fixedWaits() throws -> [String] {
        let root = TestInstallation.packageRoot.appendingPathComponent("Tests")
        // Spelt in parts, so that this file is no match for itself.
        let pattern = try Regex("Task" + #"\.sleep|sleep\("#)
        var found: [String] = []
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            guard ["swift", "py", "sh", "c"].contains(url.pathExtension),
                let text = try? String(contentsOf: url, encoding: .utf8)
            else { continue }
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(pattern) {
                found.append("\(url.path.dropFirst(root.path.count + 1)):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found.sorted()
    }

    @Test func fixedWaitsOnlyFall() throws {
        let waits = try Self.fixedWaits()
        #expect(waits.contains { $0.hasPrefix("TestSupport/Eventually.swift:") }, "the grep reads the tests: \(waits)")
        #expect(waits.count <= Self.allowed,
                "\(waits.count) fixed waits, at most \(Self.allowed): wait on a condition (eventually, holdsThroughout) instead\n\(waits.joined(separator: "\n"))")
    }
}
