import Foundation
import Testing
import TestSupport
import Reachability

/// What the command does with a status from a daemon newer than itself.
@Suite("A newer daemon's word")
struct NewerDaemonTests {
    /// A verdict this client has never seen: the daemon, which knows it,
    /// said online, and `reachd status` says so too (exit 0), rather than
    /// judging it "not online" itself.
    @Test(arguments: [(true, Int32(0)), (false, Int32(1))])
    func statusExitsAsTheDaemonJudgedAValueItCannotJudge(online: Bool, exitCode: Int32) async throws {
        let line = FakeDaemon.newerDaemonsLine
            .replacingOccurrences(of: #""connectivity":"unknown""#, with: #""connectivity":"captive_with_grace""#)
            .replacingOccurrences(of: #""online":true"#, with: #""online":\#(online)"#)
        #expect(line.contains("captive_with_grace") && line.contains(#""online":\#(online)"#))
        let daemon = try FakeDaemon(answering: line)
        let status = try await Subprocess.run([Reachd.binary, "status", "--socket", daemon.path])
        #expect(status.status == exitCode, "\(status.output)\(status.error)")
    }
}
