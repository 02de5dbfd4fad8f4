import Dispatch
import Synchronization
import Testing
@testable import Reachability
import TestSupport

/// A monitor's registrations (``MonitorHub``), fed as its session would,
/// without one: what the session is asked to follow, what each listener
/// hears and in what order, and how each ends.
@Suite("A monitor's registrations", .timeLimit(.minutes(1)))  // an unended stream would hang, not fail
struct MonitorHubTests {
    static let key = DestinationKey(try! Destination(parsing: "192.0.2.7:443"), uid: nil, family: nil)
    static let other = DestinationKey(try! Destination(parsing: "198.51.100.9:80"), uid: nil, family: nil)
    static let eth0 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "10.0.0.1")
    static let tun0 = NetworkPath(interface: "tun0", index: 9, family: .ipv4, gateway: nil)

    static func answer(_ seq: UInt64) -> DestinationStatus {
        DestinationStatus(
            target: "192.0.2.7:443", host: "192.0.2.7", port: 443, state: .reachable, reason: nil, via: nil,
            addresses: [], seq: seq, source: .daemon)
    }

    static func status(_ path: NetworkPath, seq: UInt64, changes: [StatusChange]) -> NetworkStatus {
        .built(ipv4: .through(path), seq: seq, changes: changes)
    }

    /// What handlers heard, in order, as "name:seq".
    final class Heard: Sendable {
        private let calls = Mutex<[String]>([])
        func note(_ name: String, _ answer: MonitorHub.Answer) {
            let seq = answer.status?.seq ?? answer.destinationStatus?.seq ?? 0
            calls.withLock { $0.append("\(name):\(seq)") }
        }
        var all: [String] { calls.withLock { $0 } }
    }

    @Test func aDestinationIsFollowedOnceHoweverManyListenAndLeftWithTheLast() throws {
        let remote = try FollowSession.Remote()
        let hub = MonitorHub(remote: remote)
        let first = hub.handler(.destination(Self.key)) { _ in }
        let second = hub.handler(.destination(Self.key)) { _ in }
        do {
            let stream = hub.stream(.destination(Self.key), bufferingNewest: 1) { if let status = $0.destinationStatus { $1.yield(status) } }
            #expect(remote.takeCommands() == [.follow(Self.key)])
            _ = stream
        }
        // The stream went with its scope, and one handler is cancelled: one listens still.
        first.cancel()
        #expect(remote.takeCommands() == [])
        second.cancel()
        #expect(remote.takeCommands() == [.unfollow(Self.key)])
        _ = hub.handler(.destination(Self.key)) { _ in }
        #expect(remote.takeCommands() == [.follow(Self.key)])

        // Each destination on its own: one follow each, and leaving one
        // leaves the other followed.
        let other = hub.handler(.destination(Self.other)) { _ in }
        _ = hub.handler(.destination(Self.other)) { _ in }
        let last = hub.handler(.destination(Self.key)) { _ in }
        #expect(remote.takeCommands() == [.follow(Self.other)])
        other.cancel()
        last.cancel()
        #expect(remote.takeCommands() == [])
    }

    @Test func aLateListenerHearsTheNewestAnswerFirstThenEveryOneInTheOrderListenersCame() async throws {
        let hub = MonitorHub(remote: try FollowSession.Remote())
        let heard = Heard()
        _ = hub.handler(.destination(Self.key)) { heard.note("a", $0) }
        #expect(hub.take(.destination(Self.key, Self.answer(1), line: nil)))
        _ = hub.handler(.destination(Self.key)) { heard.note("b", $0) }
        // Another destination's listeners hear nothing of this one.
        _ = hub.handler(.destination(Self.other)) { heard.note("other", $0) }
        var answers = hub.stream(.destination(Self.key), bufferingNewest: 1) { if let status = $0.destinationStatus { $1.yield(status) } }
            .makeAsyncIterator()
        #expect(try await answers.next()?.seq == 1)
        #expect(hub.take(.destination(Self.key, Self.answer(2), line: nil)))
        #expect(try await answers.next()?.seq == 2)
        #expect(heard.all == ["a:1", "b:1", "a:2", "b:2"])

        // The status: a new reader is told the current one without what
        // changed before it came; a path reader, only the changes after.
        let handover = StatusChange.path(.ipv4, from: Self.eth0, to: Self.tun0)
        _ = hub.take(.status(StatusUpdate(Self.status(Self.tun0, seq: 5, changes: [handover]), line: nil)))
        var statuses = hub.stream(.status, bufferingNewest: 1) { if let status = $0.status { $1.yield(status) } }.makeAsyncIterator()
        var paths = hub.stream(.status, bufferingNewest: 16) { for change in $0.status?.pathChanges ?? [] { $1.yield(change) } }.makeAsyncIterator()
        let first = try await statuses.next()
        #expect(first?.seq == 5 && first?.changes == [])
        let back = StatusChange.path(.ipv4, from: Self.tun0, to: Self.eth0)
        _ = hub.take(.status(StatusUpdate(Self.status(Self.eth0, seq: 6, changes: [back]), line: nil)))
        #expect(try await statuses.next()?.seq == 6)
        let change = try await paths.next()
        #expect(change?.from == Self.tun0 && change?.to == Self.eth0)
        #expect(hub.current?.seq == 6)
    }

    @Test func aDestinationTheSessionGaveUpOnEndsItsListenersAloneWithTheError() async throws {
        let remote = try FollowSession.Remote()
        let hub = MonitorHub(remote: remote)
        let heard = Heard()
        let handler = hub.handler(.destination(Self.key)) { heard.note("a", $0) }
        var answers = hub.stream(.destination(Self.key), bufferingNewest: 1) { if let status = $0.destinationStatus { $1.yield(status) } }
            .makeAsyncIterator()
        var others = hub.stream(.destination(Self.other), bufferingNewest: 1) { if let status = $0.destinationStatus { $1.yield(status) } }
            .makeAsyncIterator()
        var statuses = hub.stream(.status, bufferingNewest: 1) { if let status = $0.status { $1.yield(status) } }.makeAsyncIterator()
        _ = hub.take(.destination(Self.key, Self.answer(1), line: nil))
        #expect(try await answers.next()?.seq == 1)
        _ = remote.takeCommands()
        let refused = ReachabilityError.noDaemonAnswered([.rejected(code: "too_many_watches", message: "full")])
        #expect(hub.take(.destinationFailed(Self.key, refused)))
        await #expect(throws: refused) { _ = try await answers.next() }
        #expect(hub.lastError == refused)
        // Its handler hears no more, though nobody cancelled it.
        _ = hub.take(.destination(Self.key, Self.answer(3), line: nil))
        #expect(heard.all == ["a:1"])
        // No longer followed by the session, so nothing to unfollow.
        handler.cancel()
        #expect(remote.takeCommands() == [])
        // The other destination and the status go on.
        _ = hub.take(.destination(Self.other, Self.answer(4), line: nil))
        #expect(try await others.next()?.seq == 4)
        _ = hub.take(.status(StatusUpdate(Self.status(Self.eth0, seq: 7, changes: []), line: nil)))
        #expect(try await statuses.next()?.seq == 7)
        // Listened to again, it is followed again, and its old answer is
        // not told as the newest.
        _ = hub.handler(.destination(Self.key)) { heard.note("again", $0) }
        #expect(remote.takeCommands() == [.follow(Self.key)])
        #expect(heard.all == ["a:1"])
    }

    @Test func finishingEndsEveryStreamAndEveryLaterOneAtOnce() async throws {
        let remote = try FollowSession.Remote()
        let hub = MonitorHub(remote: remote)
        let heard = Heard()
        var streams = [
            hub.stream(.status, bufferingNewest: 1) { if let status = $0.status { $1.yield(status.seq) } }.makeAsyncIterator(),
            hub.stream(.status, bufferingNewest: 16) { for change in $0.status?.pathChanges ?? [] { $1.yield(change.status.seq) } }.makeAsyncIterator(),
            hub.stream(.destination(Self.key), bufferingNewest: 1) { if let status = $0.destinationStatus { $1.yield(status.seq) } }
                .makeAsyncIterator(),
        ]
        let ended = ReachabilityError.noDaemonAnswered([.protocolError(.versionMismatch(received: 9))])
        hub.finish(throwing: ended)
        #expect(hub.take(.destination(Self.key, Self.answer(4), line: nil)) == false)
        for index in streams.indices {
            await #expect(throws: ended) { _ = try await streams[index].next() }
        }
        var later = hub.stream(.status, bufferingNewest: 1) { if let status = $0.status { $1.yield(status) } }.makeAsyncIterator()
        await #expect(throws: ended) { _ = try await later.next() }
        _ = hub.handler(.status) { heard.note("late", $0) }
        _ = hub.take(.status(StatusUpdate(Self.status(Self.eth0, seq: 8, changes: []), line: nil)))
        #expect(heard.all == [])
        // The session ends with the hub: nothing was left to unfollow.
        #expect(remote.takeCommands() == [.follow(Self.key)])
    }

    @Test func handlersAreCalledInTheOrderTheyCameAndNotOnceCancelled() throws {
        let hub = MonitorHub(remote: try FollowSession.Remote())
        let heard = Heard()
        let cancelled = Mutex<ReachabilityMonitor.Subscription?>(nil)
        // The first cancels the fourth, whose call in the same delivery does not come.
        _ = hub.handler(.status) { answer in
            heard.note("h0", answer)
            cancelled.withLock { $0?.cancel() }
        }
        for name in ["h1", "h2"] { _ = hub.handler(.status) { heard.note(name, $0) } }
        let fourth = hub.handler(.status) { heard.note("h3", $0) }
        cancelled.withLock { $0 = fourth }
        for name in ["h4", "h5", "h6"] { _ = hub.handler(.status) { heard.note(name, $0) } }
        _ = hub.take(.status(StatusUpdate(Self.status(Self.eth0, seq: 2, changes: []), line: nil)))
        #expect(heard.all == ["h0:2", "h1:2", "h2:2", "h4:2", "h5:2", "h6:2"])
    }

    @Test func aHandlerMayRegisterAnotherWhichHearsTheNewestFirst() throws {
        let hub = MonitorHub(remote: try FollowSession.Remote())
        let heard = Heard()
        let registered = Mutex(false)
        _ = hub.handler(.status) { answer in
            heard.note("outer", answer)
            guard !registered.withLock({ $0 }) else { return }
            registered.withLock { $0 = true }
            _ = hub.handler(.status) { heard.note("inner", $0) }
        }
        _ = hub.take(.status(StatusUpdate(Self.status(Self.eth0, seq: 1, changes: []), line: nil)))
        _ = hub.take(.status(StatusUpdate(Self.status(Self.tun0, seq: 2, changes: []), line: nil)))
        #expect(heard.all == ["outer:1", "inner:1", "outer:2", "inner:2"])
    }

    /// A handler that takes its time holds up other handlers, never a
    /// stream: one registered meanwhile, from another thread, is made at once.
    @Test func aStreamIsNeverKeptWaitingByAHandler() async throws {
        let hub = MonitorHub(remote: try FollowSession.Remote())
        let inHandler = DispatchSemaphore(value: 0)
        let streamMade = DispatchSemaphore(value: 0)
        let waitedInVain = Mutex(false)
        _ = hub.handler(.status) { _ in
            inHandler.signal()
            if streamMade.wait(timeout: .now() + 5) == .timedOut { waitedInVain.withLock { $0 = true } }
        }
        let delivered = DispatchSemaphore(value: 0)
        startDetachedThread {
            _ = hub.take(.status(StatusUpdate(Self.status(Self.eth0, seq: 1, changes: []), line: nil)))
            delivered.signal()
        }
        inHandler.wait()
        var statuses = hub.stream(.status, bufferingNewest: 1) { if let status = $0.status { $1.yield(status) } }.makeAsyncIterator()
        streamMade.signal()
        delivered.wait()
        #expect(!waitedInVain.withLock { $0 }, "the stream's registration waited for the handler")
        #expect(try await statuses.next()?.seq == 1)
    }

    /// A handler may hold the last reference to what owns the hub (a
    /// monitor, whose deinit finishes it): cancelling its subscription lets
    /// the handler go after the hub's lock, where the deinit would wait for
    /// the lock its own thread holds.
    @Test func cancellingAHandlerThatHoldsTheLastReferenceToItsMonitorEndsIt() throws {
        final class Owner: Sendable {
            let hub: MonitorHub
            init(_ hub: MonitorHub) { self.hub = hub }
            deinit { hub.finish(throwing: nil) }
        }
        let hub = MonitorHub(remote: try FollowSession.Remote())
        let subscription: ReachabilityMonitor.Subscription = {
            let owner = Owner(hub)
            return hub.handler(.status) { _ in withExtendedLifetime(owner) {} }
        }()
        let cancelled = DispatchSemaphore(value: 0)
        startDetachedThread {
            subscription.cancel()
            cancelled.signal()
        }
        #expect(cancelled.wait(timeout: .now() + 5) == .success, "the cancel waited for the hub's lock")
        #expect(hub.take(.following(.daemon)) == false, "the owner's deinit finished the hub")
    }
}
