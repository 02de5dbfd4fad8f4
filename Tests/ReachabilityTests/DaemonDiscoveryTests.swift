import Glibc
import Testing
@testable import Reachability

/// Which daemon a session asks next, and when (``DaemonDiscovery``): tries
/// and their failures in, the next step out, on a clock the test moves.
@Suite("Finding a daemon to follow")
struct DaemonDiscoveryTests {
    static let system = "/run/reachd/reachd.sock"
    static let user = "/run/user/1000/reachd.sock"
    static let start = ContinuousClock.now

    static func discovery() -> DaemonDiscovery {
        DaemonDiscovery(paths: [user, system], backoff: .init(), first: start)
    }

    static func noSocket(_ path: String) -> DaemonClientError { .notRunning(path: path, cause: SystemError("connect", errno: ENOENT)) }
    static func refused(_ path: String) -> DaemonClientError { .notRunning(path: path, cause: SystemError("connect", errno: ECONNREFUSED)) }

    /// The spec's rule (Tests/ClientSpec): a subscription that lasted a
    /// second was a daemon that worked, and its end is retried after the
    /// shortest wait; one that answered and hung up sooner backs off.
    @Test(arguments: [(lasted: Duration.milliseconds(500), wait: Duration.milliseconds(400)),
                      (lasted: Duration.seconds(1), wait: Duration.milliseconds(100))])
    func aSubscriptionThatLastedASecondWorked(lasted: Duration, wait: Duration) {
        var discovery = Self.discovery()
        var now = Self.start
        // Two failures before: the next wait would be 400 ms.
        for _ in 0..<2 {
            let due = discovery.takeDueAttempt(now)
            let path = discovery.beginAttempt()
            #expect(due && path == Self.user)
            let after = discovery.failed(.closed(path: Self.user), now: now)
            #expect(after == .retry(unwatch: false))
            now = discovery.due ?? now
        }
        let due = discovery.takeDueAttempt(now)
        #expect(due)
        _ = discovery.beginAttempt()
        _ = discovery.connected()
        discovery.answered(at: now)
        now += lasted
        let after = discovery.failed(.closed(path: Self.user), now: now)
        #expect(after == .retry(unwatch: false))
        #expect(discovery.due == now + wait)
    }

    /// No socket anywhere: a watch stands in for the schedule, and a socket
    /// that refuses (bound before its daemon listens) goes back to it.
    @Test func noSocketIsWatchedForAndARefusalIsScheduled() {
        var discovery = Self.discovery()
        _ = discovery.takeDueAttempt(Self.start)
        let path = discovery.beginAttempt()
        #expect(path == Self.user)
        let first = discovery.connectFailed(Self.user, Self.noSocket(Self.user))
        #expect(first.next == Self.system && !first.saidAlready)
        let second = discovery.connectFailed(Self.system, Self.noSocket(Self.system))
        #expect(second.next == nil)
        let none = discovery.failed(Self.noSocket(Self.system), now: Self.start)
        #expect(none == .watch(paths: [Self.user, Self.system]))
        #expect(discovery.due == nil, "no timer while the watch stands")
        let again = discovery.connectFailed(Self.user, Self.noSocket(Self.user))
        #expect(again.saidAlready)
        let stillNone = discovery.failed(Self.noSocket(Self.system), now: Self.start)
        #expect(stillNone == .awaitTheWatch)
        let refusal = discovery.failed(Self.refused(Self.system), now: Self.start)
        #expect(refusal == .retry(unwatch: true))
        #expect(discovery.socketWatch == .off && discovery.due != nil)
    }

    /// A daemon of another network is not asked again; with none left,
    /// nothing is scheduled.
    @Test func anotherNetworksDaemonIsNotAskedAgain() {
        var discovery = Self.discovery()
        _ = discovery.takeDueAttempt(Self.start)
        let path = discovery.beginAttempt()
        #expect(path == Self.user)
        discovery.servesAnotherNetwork(Self.user)
        let after = discovery.failed(.otherNetwork(path: Self.user), now: Self.start)
        #expect(after == .retry(unwatch: false))
        #expect(discovery.pathsToAsk == [Self.system])
        discovery.servesAnotherNetwork(Self.system)
        let none = discovery.beginAttempt()
        #expect(none == nil)
        let last = discovery.failed(.otherNetwork(path: Self.system), now: Self.start)
        #expect(last == .nothingToAsk)
    }

    /// News where a socket would appear tries at once, then after the
    /// shortest wait however many failures came before.
    @Test func newsOfASocketTriesAtOnce() {
        var discovery = Self.discovery()
        var now = Self.start
        for _ in 0..<4 {
            _ = discovery.takeDueAttempt(now)
            _ = discovery.failed(.closed(path: Self.user), now: now)
            now = discovery.due ?? now
        }
        discovery.socketsChanged(now)
        #expect(discovery.due == now)
        let due = discovery.takeDueAttempt(now)
        #expect(due)
        _ = discovery.failed(.closed(path: Self.user), now: now)
        #expect(discovery.due == now + .milliseconds(100))
    }
}
