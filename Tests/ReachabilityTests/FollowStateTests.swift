import Foundation
import Glibc
import Testing
import TestSupport
@testable import Reachability

/// Every decision of a follow session, without a socket or a clock: inputs
/// in (what the loop would read, or what an effect came to), updates and
/// effects out (``FollowState``). The socket-driven cases of
/// `FollowSessionTests` hold here step by step, and the ones a socket can't
/// stage in a test (a netlink failure, a liveness verdict at a chosen time).
@Suite("A follow session's decisions")
struct FollowStateTests {
    typealias Key = DestinationKey

    static let socket = "/run/reachd/reachd.sock"
    static let userSocket = "/run/user/1000/reachd.sock"
    /// The namespace the session's connections are made in, which the
    /// daemon's statuses name (or another's).
    static let network = NetworkNamespace(inode: 4026531840, device: 4, cookie: 1)
    static let statusText = FakeDaemon.newerDaemonsLine.replacingOccurrences(
        of: #""online":true"#, with: #""netns":{"cookie":1,"device":4,"inode":4026531840},"online":true"#)
    static let statusLine = Array(statusText.utf8)
    static let start = ContinuousClock.now

    static func key(_ target: String) -> Key {
        Key(try! Destination(parsing: target), uid: nil, family: nil)
    }

    static func destinationLine(_ state: DestinationState, id: String, target: String) -> [UInt8] {
        let destination = try! Destination(parsing: target)
        let status = DestinationStatus(
            id: id, target: destination.description, host: destination.host, port: destination.port, state: state,
            reason: nil, via: nil, addresses: [], seq: 1, source: .daemon)
        return Array(DaemonMessage.destination(status).line().dropLast())
    }

    static func refusal(_ code: String, id: String?) -> [UInt8] {
        Array(DaemonMessage.error(code: code, message: "refused", id: id).line().dropLast())
    }

    static func embeddedStatus(seq: UInt64) -> NetworkStatus {
        let path = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1", source: nil)
        return .built(ipv4: .through(path), seq: seq, source: .inProcess)
    }

    static func embeddedAnswer(_ target: String, _ state: DestinationState) -> DestinationStatus {
        let destination = try! Destination(parsing: target)
        return DestinationStatus(
            id: nil, target: destination.description, host: destination.host, port: destination.port, state: state,
            reason: nil, via: nil, addresses: [], seq: 1, source: .inProcess)
    }

    /// A daemon whose statuses say they serve this network, or another.
    static func connected(_ path: String, servesThisNetwork: Bool = true) -> FollowState.Input {
        .connected(path: path, ownNetwork: servesThisNetwork ? network : NetworkNamespace(inode: 4026532001, device: 4, cookie: 2))
    }

    /// The state, a clock the test moves, and what came out, as words.
    struct Driver {
        var state: FollowState
        var now = FollowStateTests.start

        init(
            _ source: SourcePreference, paths: [String] = [FollowStateTests.socket],
            detail: StatusDetail? = .summary, daemonRequired: Bool = false, retryingInProcess: Bool = true
        ) {
            var configuration = FollowSession.Configuration(
                source: source, socketPaths: paths, statusDetail: detail,
                backoff: .init(initial: .milliseconds(100), maximum: .seconds(1)), daemonRequired: daemonRequired)
            configuration.retryingInProcess = retryingInProcess
            state = FollowState(configuration)
            state.restart(at: now)
        }

        /// Where the session stands with its daemon, as a word.
        var phase: String {
            switch state.phase {
            case .idle: "idle"
            case .connecting: "connecting"
            case .answered: "answered"
            case .unresponsive: "unresponsive"
            case .ended: "ended"
            }
        }

        /// Feeds `input`; the updates, then the effects, as words.
        @discardableResult
        mutating func feed(_ input: FollowState.Input) -> (updates: [String], effects: [String]) {
            let step = state.step(input, now: now)
            return (step.updates.map(Self.describe), step.effects.map(Self.describe))
        }

        mutating func follow(_ targets: String...) -> [String] {
            feed(.commands(targets.map { .follow(FollowStateTests.key($0)) })).effects
        }

        /// Connects to the one socket and takes its first status: what a
        /// session that found a working daemon did.
        mutating func answeredByDaemon(lines: [[UInt8]] = []) -> [String] {
            feed(.tick)
            feed(FollowStateTests.connected(FollowStateTests.socket))
            return feed(.daemonLines([FollowStateTests.statusLine] + lines)).updates
        }

        static func describe(_ update: FollowSession.Update) -> String {
            switch update {
            case .following(let source): "following \(source.rawValue)"
            case .status(let update): "status from \((try? update.status().source.rawValue) ?? "?")"
            case .destination(let key, let status, _): "\(key.destination) \(status.state.rawValue) from \(status.source.rawValue)"
            case .destinationFailed(let key, _): "\(key.destination) failed"
            case .problem(let error):
                switch error {
                case .inProcessFailed: "problem: netlink"
                case .noDaemonAnswered, .waitFailed: "problem: daemon"
                }
            }
        }

        static func describe(_ effect: FollowState.Effect) -> String {
            switch effect {
            case .connect(let path, let requests): "connect \(path) " + requests.map(describe).joined(separator: ", ")
            case .send(let requests): "send " + requests.map(describe).joined(separator: ", ")
            case .readDaemon: "read"
            case .decode(_, let lines): "decode, then \(lines.count) lines"
            case .dropDaemon: "drop daemon"
            case .startEngine: "start engine"
            case .stopEngine: "stop engine"
            case .holdInProcess(let keys): "hold [" + keys.map(\.destination.description).joined(separator: ", ") + "]"
            case .dropInProcess(let key): "drop \(key.destination)"
            case .log(let level, _, _): "log \(level)"
            case .watchSockets(let paths): "watch " + paths.joined(separator: ", ")
            case .unwatchSockets: "unwatch"
            case .end(let error): error == nil ? "end" : "end: failed"
            }
        }

        static func describe(_ request: ClientRequest) -> String {
            [request.operation.rawValue, request.id].compactMap { $0 }.joined(separator: " ")
        }
    }

    // MARK: Finding a daemon

    @Test func theFirstDaemonThatAcceptsCarriesTheStatusAndEveryWatch() {
        var session = Driver(.automatic, paths: [Self.userSocket, Self.socket])
        #expect(session.follow("api.example.com:443", "cdn.example.com:443").isEmpty, "nothing to send to yet")
        #expect(session.feed(.tick).effects == ["connect \(Self.userSocket) subscribe, watch 0, watch 1"])
        let refused = session.feed(.connectFailed(path: Self.userSocket, .closed(path: Self.userSocket)))
        #expect(refused.effects.last == "connect \(Self.socket) subscribe, watch 0, watch 1", "the next socket")
        session.feed(Self.connected(Self.socket))
        let answered = session.feed(.daemonLines([
            Self.statusLine, Self.destinationLine(.reachable, id: "1", target: "cdn.example.com:443"),
        ]))
        #expect(answered.updates == ["following daemon", "status from daemon", "cdn.example.com:443 reachable from daemon"])
        #expect(answered.effects == ["stop engine"])
        #expect(session.follow("third.example.com:443") == ["send watch 2"], "on the same connection")
    }

    // MARK: Waiting for a daemon that is not there

    static func nothingListens(_ path: String) -> FollowState.Input {
        .connectFailed(path: path, .notRunning(path: path, cause: SystemError("connect", errno: ENOENT)))
    }

    /// Nothing listens at any socket: in-process, a watch of where the
    /// sockets would appear, and one more try once it is set, for a socket
    /// made in between; then no timer at all, and nothing said again, until
    /// the watch says something changed there. Before, a client asked every
    /// 5 s for as long as it ran.
    @Test func noDaemonListeningIsWaitedForByAWatchNotATimer() {
        var session = Driver(.automatic, paths: [Self.userSocket, Self.socket])
        session.feed(.tick)
        session.feed(Self.nothingListens(Self.userSocket))
        let none = session.feed(Self.nothingListens(Self.socket))
        #expect(none.updates == ["problem: daemon"])
        #expect(none.effects.suffix(3) == [
            "start engine", "watch \(Self.userSocket), \(Self.socket)", "connect \(Self.userSocket) subscribe",
        ])
        let first = session.feed(Self.nothingListens(Self.userSocket))
        let still = session.feed(Self.nothingListens(Self.socket))
        #expect(first.updates.isEmpty && still.updates.isEmpty, "said already")
        #expect(first.effects == ["connect \(Self.socket) subscribe"] && !still.effects.contains { $0.hasPrefix("watch") })
        #expect(session.state.nextDeadline == nil, "no timer")
        session.now += .seconds(60)
        #expect(session.feed(.tick).effects.isEmpty, "nothing to do while nothing changes there")
        session.feed(.socketsChanged)
        #expect(session.feed(.tick).effects == ["connect \(Self.userSocket) subscribe"], "at once")
        // Bound, not listening yet: again after the shortest wait.
        session.feed(.connectFailed(path: Self.userSocket, .notRunning(path: Self.userSocket, cause: SystemError("connect", errno: ECONNREFUSED))))
        session.feed(Self.nothingListens(Self.socket))
        #expect(session.state.nextDeadline == session.now + .milliseconds(100))
        session.now += .milliseconds(100)
        #expect(session.feed(.tick).effects == ["connect \(Self.userSocket) subscribe"])
        #expect(session.feed(Self.connected(Self.userSocket)).effects.isEmpty, "the watch ended with its news")
    }

    /// The daemon started between the failure and the watch: the try after
    /// the watch finds it, and the watch goes.
    @Test func aDaemonMadeWhileTheWatchWasSetIsFoundByTheTryAfterIt() {
        var session = Driver(.automatic)
        session.feed(.tick)
        #expect(session.feed(Self.nothingListens(Self.socket)).effects.suffix(2) == ["watch \(Self.socket)", "connect \(Self.socket) subscribe"])
        #expect(session.feed(Self.connected(Self.socket)).effects == ["unwatch"])
        #expect(session.feed(.daemonLines([Self.statusLine])).updates == ["following daemon", "status from daemon"])
    }

    /// A daemon that is there but fails otherwise (stopped, refusing, a
    /// socket this user may not open), and a socket with nothing listening
    /// yet, are asked again on the schedule; so is a daemon whose sockets
    /// can't be watched.
    @Test func aDaemonThereButFailingAndAnUnwatchableSocketAreAskedOnTheSchedule() {
        var session = Driver(.automatic)
        session.feed(.tick)
        let denied = session.feed(.connectFailed(path: Self.socket, .connectionFailed(path: Self.socket, cause: SystemError("connect", errno: EACCES))))
        #expect(!denied.effects.contains { $0.hasPrefix("watch") })
        #expect(session.state.nextDeadline == session.now + .milliseconds(100))

        // A socket that refuses: stale, or bound a moment before its daemon
        // listens, which no watch would tell.
        var refusing = Driver(.automatic)
        refusing.feed(.tick)
        let refused = refusing.feed(.connectFailed(path: Self.socket, .notRunning(path: Self.socket, cause: SystemError("connect", errno: ECONNREFUSED))))
        #expect(!refused.effects.contains { $0.hasPrefix("watch") })
        #expect(refusing.state.nextDeadline == refusing.now + .milliseconds(100))

        // The try queued after the watch finds the schedule, and no watch
        // is asked for again: asked at each failure, it looped.
        var unwatchable = Driver(.automatic)
        unwatchable.feed(.tick)
        unwatchable.feed(Self.nothingListens(Self.socket))
        unwatchable.feed(.socketsUnwatchable)
        let recheck = unwatchable.feed(Self.nothingListens(Self.socket))
        #expect(!recheck.effects.contains { $0.hasPrefix("watch") || $0.hasPrefix("connect") }, "\(recheck.effects)")
        #expect(unwatchable.state.nextDeadline != nil)
    }

    @Test func nothingADaemonSaysCountsBeforeItsStatusSaysWhichNetwork() {
        var session = Driver(.automatic)
        _ = session.follow("api.example.com:443")
        session.feed(.tick)
        session.feed(Self.connected(Self.socket, servesThisNetwork: false))
        let early = session.feed(.daemonLines([Self.destinationLine(.reachable, id: "0", target: "api.example.com:443")]))
        #expect(early.updates.isEmpty, "held until a status says which network")
        let other = session.feed(.daemonLines([Self.statusLine]))
        #expect(other.updates == ["problem: daemon"], "nothing the daemon said is delivered")
        #expect(other.effects == ["drop daemon", "log warning", "start engine"])
        // Another network's daemon is not asked again: with none left, no retry.
        #expect(session.state.nextDeadline == nil)
    }

    @Test func aDaemonThatNeverAnswersCostsASecondThenInProcess() {
        var session = Driver(.automatic)
        session.feed(.tick)
        session.feed(Self.connected(Self.socket))
        #expect(session.state.nextDeadline == Self.start + DaemonConnection.answerTimeout)
        session.now = Self.start + .milliseconds(999)
        #expect(session.feed(.tick).effects.isEmpty)
        session.now = Self.start + DaemonConnection.answerTimeout
        let overdue = session.feed(.tick)
        #expect(overdue.updates == ["problem: daemon"])
        #expect(overdue.effects == ["drop daemon", "log warning", "start engine"])
        let started = session.feed(.engineStarted(lastStatus: Self.embeddedStatus(seq: 1)))
        #expect(started.updates == ["following embedded", "status from embedded"])
        #expect(session.state.nextDeadline == session.now + .milliseconds(100), "the daemon again, on the schedule")
    }

    @Test func aRequiredDaemonThatNeverAnswersEndsTheSession() {
        var session = Driver(.automatic, daemonRequired: true)
        session.feed(.tick)
        session.feed(Self.connected(Self.socket))
        session.now = Self.start + DaemonConnection.answerTimeout
        #expect(session.feed(.tick).effects == ["drop daemon", "end: failed"])
        let after = session.feed(.engineFailed(NetlinkError("nl_connect", errno: EPERM)))
        #expect(after.updates.isEmpty && after.effects.isEmpty, "an ended session decides nothing more")
    }

    @Test func aDaemonOfAnotherVersionEndsADaemonOnlySession() {
        var session = Driver(.daemon)
        session.feed(.tick)
        session.feed(Self.connected(Self.socket))
        let line = Array(#"{"type":"status","version":99}"#.utf8)
        #expect(session.feed(.daemonLines([line])).effects == ["drop daemon", "log error", "end: failed"])
    }

    @Test func aStatusPassedOnIsDeliveredBeforeItIsDecodedAndWhatFollowsItAfter() throws {
        var session = Driver(.automatic, detail: .full)
        _ = session.follow("api.example.com:443")
        _ = session.answeredByDaemon()
        let next = Array(FakeDaemon.newerDaemonsLine.replacingOccurrences(of: #""seq":7"#, with: #""seq":8"#).utf8)
        let answer = Self.destinationLine(.reachable, id: "0", target: "api.example.com:443")
        let news = session.feed(.daemonLines([next, answer]))
        #expect(news.updates == ["status from daemon"], "delivered as it came")
        #expect(news.effects == ["decode, then 1 lines"], "the answer after it waits for the decoding")
        let status = try StatusUpdate(line: next).status()
        let decoded = session.feed(.decoded(.success(status), then: [answer]))
        #expect(decoded.updates == ["api.example.com:443 reachable from daemon"])
        let broken = session.feed(.daemonLines([next]))
        #expect(broken.effects == ["decode, then 0 lines"])
        let malformed = session.feed(.decoded(.failure(.protocolError(.malformed("a status"))), then: []))
        #expect(malformed.effects == ["drop daemon", "log warning", "start engine"], "a line that does not decode fails the daemon")
    }

    // MARK: Reconnecting

    @Test func aReconnectionSendsTheWatchesAgainAndDropsRepeats() {
        var session = Driver(.automatic)
        _ = session.follow("api.example.com:443")
        let reachable = Self.destinationLine(.reachable, id: "0", target: "api.example.com:443")
        #expect(session.answeredByDaemon(lines: [reachable]).last == "api.example.com:443 reachable from daemon")
        let gone = session.feed(.daemonFailed(.closed(path: Self.socket)))
        #expect(gone.effects == ["drop daemon", "log debug", "start engine"], "a daemon going away is no warning")
        #expect(session.feed(.engineStarted(lastStatus: nil)).effects == ["hold [api.example.com:443]"])
        session.now += .milliseconds(100)
        #expect(session.feed(.tick).effects == ["connect \(Self.socket) subscribe, watch 0"])
        session.feed(Self.connected(Self.socket))
        let pending = Self.destinationLine(.pending, id: "0", target: "api.example.com:443")
        let back = session.feed(.daemonLines([Self.statusLine, pending, reachable]))
        #expect(back.updates == ["following daemon"], "the same status and answer again, and a restarted daemon's pending, are no news")
        #expect(back.effects == ["stop engine"])
    }

    /// A daemon that answers and hangs up at once, over and over (a crash
    /// loop), is asked again with backoff, each wait doubling: it answered,
    /// but did not work. One whose subscription lasted a second worked, and
    /// its end (a restart) is retried after the shortest wait. Before, any
    /// answer reset the schedule: every 100 ms a connection, and the
    /// in-process engine restarted. The GIO module's rule (REACHD_STABLE_MS).
    @Test func aDaemonThatAnswersAndHangsUpBacksOffAndOneThatLastedDoesNot() {
        var session = Driver(.automatic)
        _ = session.answeredByDaemon()
        var waits: [Duration] = []
        for _ in 0..<4 {
            session.feed(.daemonFailed(.closed(path: Self.socket)))
            session.feed(.engineStarted(lastStatus: nil))
            guard let due = session.state.nextDeadline else {
                Issue.record("no retry scheduled")
                return
            }
            waits.append(due - session.now)
            session.now = due
            #expect(session.feed(.tick).effects == ["connect \(Self.socket) subscribe"])
            session.feed(Self.connected(Self.socket))
            #expect(session.feed(.daemonLines([Self.statusLine])).updates.first == "following daemon")
        }
        #expect(waits == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800)])
        session.now += .seconds(1)
        session.feed(.daemonFailed(.closed(path: Self.socket)))
        session.feed(.engineStarted(lastStatus: nil))
        #expect(session.state.nextDeadline == session.now + .milliseconds(100), "a subscription that lasted: the shortest wait")
    }

    @Test func whatInProcessComputedMeanwhileIsDeliveredUntilTheDaemonAnswers() {
        var session = Driver(.automatic)
        _ = session.follow("api.example.com:443")
        session.feed(.tick)
        session.feed(.connectFailed(path: Self.socket, .closed(path: Self.socket)))
        let started = session.feed(.engineStarted(lastStatus: Self.embeddedStatus(seq: 1)))
        #expect(started.effects == ["hold [api.example.com:443]"])
        let computed = session.feed(.computed([.destination(Self.key("api.example.com:443"), Self.embeddedAnswer("api.example.com:443", .reachable))]))
        #expect(computed.updates == ["api.example.com:443 reachable from embedded"])
        session.now += .milliseconds(100)
        _ = session.answeredByDaemon()
        // A destination the daemon refuses keeps the engine running.
        session.feed(.daemonLines([Self.refusal(RequestError.tooManyWatches, id: "0")]))
        #expect(session.state.engineRunning)
        let late = session.feed(.computed([.status(Self.embeddedStatus(seq: 2))]))
        #expect(late.updates.isEmpty, "the daemon answers now: the engine's status is not delivered")
    }

    // MARK: Refusals

    @Test func aRefusedWatchIsAnsweredInProcessWithoutAskingAgain() {
        var session = Driver(.automatic)
        _ = session.follow("api.example.com:443", "cdn.example.com:443")
        _ = session.answeredByDaemon()
        let refused = session.feed(.daemonLines([Self.refusal(RequestError.tooManyWatches, id: "1")]))
        #expect(refused.updates == ["problem: daemon"])
        #expect(refused.effects == ["log warning", "start engine"])
        #expect(session.feed(.engineStarted(lastStatus: Self.embeddedStatus(seq: 1))).effects == ["hold [cdn.example.com:443]"],
            "only what the daemon refused, and no status while the daemon answers")
        session.feed(.daemonFailed(.closed(path: Self.socket)))
        session.now += .milliseconds(100)
        #expect(session.feed(.tick).effects == ["connect \(Self.socket) subscribe, watch 0"], "not asked again")
        // Unfollowing the last refused destination stops the engine kept for it.
        session.feed(Self.connected(Self.socket))
        session.feed(.daemonLines([Self.statusLine]))
        let unfollowed = session.feed(.commands([.unfollow(Self.key("cdn.example.com:443"))]))
        #expect(unfollowed.effects == ["drop cdn.example.com:443", "stop engine"], "no unwatch for what the daemon does not hold")
    }

    @Test func aDaemonOnlySessionEndsARefusedDestinationAlone() {
        var session = Driver(.daemon)
        _ = session.follow("api.example.com:443")
        _ = session.answeredByDaemon()
        let refused = session.feed(.daemonLines([Self.refusal(RequestError.badDestination, id: "0")]))
        #expect(refused.updates == ["problem: daemon", "api.example.com:443 failed"])
        #expect(refused.effects == ["log warning"], "no engine, and the daemon kept")
        #expect(session.feed(.commands([.unfollow(Self.key("api.example.com:443"))])).effects.isEmpty, "no longer followed")
    }

    @Test func aRefusalAboutAnUnfollowedDestinationKeepsTheDaemon() {
        var session = Driver(.automatic)
        _ = session.follow("api.example.com:443")
        _ = session.answeredByDaemon()
        let unfollowed = session.feed(.commands([.unfollow(Self.key("api.example.com:443"))]))
        #expect(unfollowed.effects == ["drop api.example.com:443", "send unwatch 0", "stop engine"])
        let late = session.feed(.daemonLines([Self.refusal("unknown_id", id: "0")]))
        #expect(late.updates.isEmpty && late.effects.isEmpty)
        let unasked = session.feed(.daemonLines([Self.refusal("unknown_id", id: "7")]))
        #expect(unasked.effects.first == "drop daemon", "an id never given is the daemon's mistake")
    }

    @Test func aFailedLookupKeepsTheWatchWithTheDaemon() {
        var session = Driver(.automatic)
        _ = session.follow("api.example.com:443")
        _ = session.answeredByDaemon()
        let failed = session.feed(.daemonLines([Self.refusal(RequestError.lookupFailed, id: "0")]))
        #expect(failed.updates == ["problem: daemon"])
        #expect(failed.effects == ["log warning"], "no engine, no drop")
        // The daemon answers at its next evaluation, and is heard.
        let answers = session.feed(.daemonLines([
            Self.destinationLine(.reachable, id: "0", target: "api.example.com:443"),
            Self.destinationLine(.unreachable, id: "0", target: "api.example.com:443"),
        ]))
        #expect(answers.updates == ["api.example.com:443 reachable from daemon", "api.example.com:443 unreachable from daemon"])
        #expect(answers.effects.isEmpty, "\(answers.effects)")
    }

    // MARK: Liveness

    @Test func aDaemonThatStopsAnsweringIsStoodInForThenResubscribedWhenItSpeaks() {
        var session = Driver(.automatic)
        _ = session.answeredByDaemon()
        #expect(session.phase == "answered")
        let silent = session.feed(.liveness(.notAnswering(.timedOut(path: Self.socket, timeout: .seconds(1)))))
        #expect(silent.updates == ["problem: daemon"])
        #expect(silent.effects == ["log warning", "start engine"], "the connection is kept open")
        #expect(session.phase == "unresponsive")
        let started = session.feed(.engineStarted(lastStatus: Self.embeddedStatus(seq: 1)))
        #expect(started.updates == ["following embedded", "status from embedded"])
        #expect(session.feed(.daemonReadable).effects == ["drop daemon"], "its next word starts a fresh subscription, not read")
        #expect(session.phase == "idle")
        #expect(session.feed(.tick).effects == ["connect \(Self.socket) subscribe"], "at once")
        session.feed(Self.connected(Self.socket))
        #expect(session.phase == "connecting")
    }

    @Test func aDaemonAnsweringItsProbeAgainIsResubscribed() {
        var session = Driver(.automatic)
        _ = session.answeredByDaemon()
        session.feed(.liveness(.notAnswering(.timedOut(path: Self.socket, timeout: .seconds(1)))))
        #expect(session.feed(.liveness(.answeringAgain)).effects == ["drop daemon"])
        #expect(session.feed(.tick).effects == ["connect \(Self.socket) subscribe"])
        var other = Driver(.automatic)
        _ = other.answeredByDaemon()
        #expect(other.feed(.liveness(.gone(.closed(path: Self.socket)))).effects == ["drop daemon", "log debug", "start engine"])
    }

    @Test func aRequiredDaemonThatStopsAnsweringEndsTheSession() {
        var session = Driver(.automatic, daemonRequired: true)
        _ = session.answeredByDaemon()
        let silent = session.feed(.liveness(.notAnswering(.timedOut(path: Self.socket, timeout: .seconds(1)))))
        #expect(silent.effects == ["drop daemon", "end: failed"])
        #expect(session.phase == "ended")
    }

    // MARK: In-process

    @Test func netlinkFailingInProcessIsRetriedOnTheSchedule() {
        var session = Driver(.inProcess, paths: [])
        #expect(session.feed(.tick).effects == ["start engine"])
        let failed = session.feed(.engineFailed(NetlinkError("nl_connect", errno: EPERM)))
        #expect(failed.updates == ["problem: netlink"])
        #expect(failed.effects == ["stop engine", "log error"])
        #expect(session.state.nextDeadline == session.now + .milliseconds(100))
        session.now += .milliseconds(100)
        #expect(session.feed(.tick).effects == ["start engine"])
    }

    @Test func netlinkFailingEndsASessionThatCannotWait() {
        var session = Driver(.inProcess, paths: [], retryingInProcess: false)
        session.feed(.tick)
        #expect(session.feed(.engineFailed(NetlinkError("nl_connect", errno: EPERM))).effects == ["stop engine", "end: failed"])
    }

    /// The loop performs effects in the order decided, so a start's result
    /// may trail a later stop; with no daemon answering, counting it would
    /// say "following in-process" for an engine that is not there.
    @Test func anEngineStoppedBeforeItStartedDeliversNothing() {
        var session = Driver(.automatic)
        _ = session.follow("api.example.com:443")
        session.feed(.tick)
        #expect(session.feed(.connectFailed(path: Self.socket, .closed(path: Self.socket))).effects.last == "start engine")
        #expect(session.feed(.engineFailed(NetlinkError("nl_connect", errno: EPERM))).effects.first == "stop engine")
        let stopped = session.state
        let late = session.feed(.engineStarted(lastStatus: Self.embeddedStatus(seq: 1)))
        #expect(late.updates.isEmpty && late.effects.isEmpty)
        #expect(session.state == stopped, "the late start left no trace")
    }

    @Test func aNewRunStartsWithNoConnectionAndSaysItsSourceAgain() {
        var session = Driver(.automatic)
        _ = session.answeredByDaemon()
        session.feed(.commands([.stop]))
        session.state.restart(at: session.now)
        #expect(session.feed(.tick).effects == ["connect \(Self.socket) subscribe"], "the last run's connection was closed")
        session.feed(Self.connected(Self.socket))
        #expect(session.feed(.daemonLines([Self.statusLine])).updates == ["following daemon"], "the same status is no news, its source is")
    }

    @Test func stopEndsTheSessionAndIgnoresWhatFollows() {
        var session = Driver(.automatic)
        _ = session.answeredByDaemon()
        let stopped = session.feed(.commands([.stop, .follow(Self.key("api.example.com:443"))]))
        #expect(stopped.effects == ["end"], "no watch sent after the stop")
        #expect(session.state.phase.hasEnded)
        let ended = session.state
        for input: FollowState.Input in [
            .tick, .daemonLines([Self.offlineNews]), .commands([.follow(Self.key("b.example.com:443"))]),
            .computed([.status(Self.embeddedStatus(seq: 9))]), .socketsChanged,
        ] {
            let after = session.feed(input)
            #expect(after.updates.isEmpty && after.effects.isEmpty && session.state == ended, "\(input) after the end")
        }
    }

    /// A tick with nothing due changes nothing of the session: not a
    /// deadline, not a count.
    @Test func aTickWithNothingDueLeavesTheWholeStateAsItWas() {
        var session = Driver(.automatic)
        _ = session.answeredByDaemon()
        let answered = session.state
        #expect(session.feed(.tick) == ([], []) && session.state == answered)
    }

    @Test func aDaemonOnlySessionWithEveryDaemonAnotherNetworksEnds() {
        var session = Driver(.daemon)
        session.feed(.tick)
        session.feed(Self.connected(Self.socket, servesThisNetwork: false))
        #expect(session.feed(.daemonLines([Self.statusLine])).effects == ["drop daemon", "end: failed"])
        // Remembered in a later run: it ends at once rather than wait for nothing.
        session.state.restart(at: session.now)
        #expect(session.feed(.tick).effects == ["end: failed"])
    }

    /// The daemon's next status after ``statusLine``: IPv4 lost its route.
    static let offlineNews = Array(statusText
        .replacingOccurrences(
            of: #""ipv4":{"path":{"family":"ipv4","gateway":"192.0.2.1","index":2,"interface":"eth0"},"reachability":"online","reason":null}"#,
            with: #""ipv4":{"path":null,"reachability":"local","reason":"no_route"}"#)
        .replacingOccurrences(of: #""seq":7"#, with: #""seq":8"#).utf8)

    @Test func aStatusDecodedAfterTheDaemonWentCountsAsDelivered() throws {
        var session = Driver(.automatic, detail: .full)
        _ = session.answeredByDaemon()
        let offline = Self.offlineNews
        #expect(session.feed(.daemonLines([offline])).updates == ["status from daemon"])
        session.feed(.daemonFailed(.closed(path: Self.socket)))
        session.feed(.decoded(.success(try StatusUpdate(line: offline).status()), then: []))
        session.now += .milliseconds(100)
        session.feed(.tick)
        session.feed(Self.connected(Self.socket))
        #expect(session.feed(.daemonLines([offline])).updates.isEmpty,
            "the daemon's status is the one delivered last, from the same source: no news")
        #expect(session.state.phase.daemonHasAnswered)
    }

    /// The same with a reader that printed the line and never decoded it:
    /// the session keeps it undecoded, and a later status is compared with
    /// it all the same.
    @Test func aStatusNobodyDecodedIsStillWhatALaterOneIsComparedWith() throws {
        var session = Driver(.automatic, detail: .full)
        _ = session.answeredByDaemon()
        let offline = Self.offlineNews
        let news = session.feed(.daemonLines([offline]))
        #expect(news.updates == ["status from daemon"])
        #expect(news.effects == ["decode, then 0 lines"])
        let update = StatusUpdate(line: offline)
        #expect(session.feed(.passedUndecoded(update)).effects.isEmpty)
        #expect(update.decodedResult == nil, "nothing needed what it says yet")
        session.feed(.daemonFailed(.closed(path: Self.socket)))
        session.now += .milliseconds(100)
        session.feed(.tick)
        session.feed(Self.connected(Self.socket))
        #expect(session.feed(.daemonLines([offline])).updates.isEmpty,
            "the daemon's status is the one delivered last, from the same source: no news")
        #expect(update.decodedResult != nil, "decoded once a later status was compared with it")
    }
}
