import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Reachability

/// What a session logs of daemon failures, without a socket: each warned
/// about once until the daemon answers again (``DaemonFailureLog``).
@Suite("A session's log of daemon failures")
struct DaemonFailureLogTests {
    static let refused = DaemonClientError.rejected(code: "too_many_clients", message: "over the limit")
    static let stopped = DaemonClientError.timedOut(path: "/run/reachd/reachd.sock", timeout: .seconds(1))

    @Test func aFailureIsAWarningOnceUntilTheDaemonAnswersAgain() throws {
        var log = DaemonFailureLog()
        let levels = [
            log.entry(for: Self.refused, source: .automatic)?.level,
            log.entry(for: Self.refused, source: .automatic)?.level,
            log.entry(for: Self.stopped, source: .automatic)?.level,
        ]
        #expect(levels == [.warning, .debug, .warning], "a new failure is news again")
        log.daemonAnswered()
        let afterAnswer = log.entry(for: Self.stopped, source: .automatic)
        #expect(afterAnswer?.level == .warning)
    }

    @Test func theWarningSaysWhatTheSessionDoesMeanwhile() throws {
        var log = DaemonFailureLog()
        let logged = log.entry(for: Self.refused, source: .automatic)
        let automatic = try #require(logged)
        #expect(automatic.message.hasSuffix("; following the network in-process meanwhile"), "\(automatic.message)")
        var daemonOnly = DaemonFailureLog()
        let loggedForDaemon = daemonOnly.entry(for: Self.refused, source: .daemon)
        let daemon = try #require(loggedForDaemon)
        #expect(!daemon.message.contains("in-process"), "\(daemon.message)")
    }

    @Test func aDaemonThatIsNotRunningIsNoWarningAndAnotherNetworksOnlyOnce() {
        var log = DaemonFailureLog()
        let notRunning = DaemonClientError.notRunning(path: "/run/reachd/reachd.sock", cause: SystemError("connect", errno: ENOENT))
        let levels = [log.entry(for: notRunning, source: .automatic)?.level, log.entry(for: notRunning, source: .automatic)?.level]
        #expect(levels == [.debug, .debug])
        let other = DaemonClientError.otherNetwork(path: "/run/reachd/reachd.sock")
        let first = log.entry(for: other, source: .automatic)
        #expect(first?.level == .warning && first?.message.hasSuffix("in-process instead") == true)
        let again = log.entry(for: other, source: .automatic)
        #expect(again == nil, "said once, and never asked again")
    }
}
