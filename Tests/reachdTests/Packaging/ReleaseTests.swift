import Foundation
import Testing
import TestSupport
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

    @Test func makeInstallNeverRunsApt() async throws {
        // What make would run, without running it.
        let plan = try await Subprocess.run(
            ["/usr/bin/env", "make", "-n", "-C", TestInstallation.packageRoot.path, "install", "DESTDIR=/nonexistent"])
        #expect(plan.status == 0, "\(plan.error)")
        #expect(plan.output.contains("--static-swift-stdlib"), "the shipped binary carries Swift's runtime")
        #expect(plan.output.contains("install -Dm755 -s .build/dist/release/reachd"))
        #expect(!plan.output.contains("apt-get"), "packagers install build dependencies their own way")
    }

    @Test func theLicenceIsApache2() throws {
        let licence = try String(contentsOf: TestInstallation.packageRoot.appendingPathComponent("LICENSE"), encoding: .utf8)
        #expect(licence.contains("Apache License") && licence.contains("Version 2.0, January 2004"))
    }
}
