import Foundation
import Testing
@testable import Reachability

@Suite("Release metadata")
struct ReleaseTests {
    @Test func theChangelogsNewestEntryIsTheVersionTheCommandReports() async throws {
        let changelog = try String(
            contentsOf: TestInstallation.packageRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## [") }
        #expect(newest == "## [\(ReachdVersion.current)]", "\(newest ?? "no entry")")
        let reported = try await Subprocess.run([Reachd.binary, "--version"])
        #expect(reported.output == ReachdVersion.current + "\n")
    }

    @Test func theLicenceIsApache2() throws {
        let licence = try String(contentsOf: TestInstallation.packageRoot.appendingPathComponent("LICENSE"), encoding: .utf8)
        #expect(licence.contains("Apache License") && licence.contains("Version 2.0, January 2004"))
    }
}
