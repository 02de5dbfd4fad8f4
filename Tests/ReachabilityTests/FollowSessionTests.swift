import Foundation
import Logging
import Synchronization
import Testing
import TestSupport
@testable import Reachability

extension SessionsInThisProcess {
    /// The one follow session, driven against a daemon the test scripts: what it
    /// asks of one connection, what it makes of the answers, and how it moves
    /// between the daemon and in-process.
    @Suite("Follow session")
    struct FollowSessionTests {
        typealias Key = DestinationKey

        static let backoff = Backoff(initial: .milliseconds(10), maximum: .milliseconds(40))

        /// The destinations of these tests: literals, so that in-process answers
        /// need no resolver.
        static func key(_ target: String) throws -> Key {
            Key(try Destination(parsing: target), uid: nil, family: nil)
        }

        /// A daemon's answer to watch `id`, as its line.
        static func line(_ state: DestinationState, id: String, target: String = "api.example.com:443") -> String {
            let route = DestinationRoute(interface: "eth0", index: 2, family: .ipv4, gateway: nil, table: 254, source: "192.0.2.7")
            let destination = try! Destination(parsing: target)
            let status = DestinationStatus(
                id: id, target: destination.description, host: destination.host, port: destination.port, state: state,
                reason: nil, via: state == .reachable ? route : nil, addresses: [], seq: 1, source: .daemon)
            return String(decoding: DaemonMessage.destination(status).line().dropLast(), as: UTF8.self)
        }

        /// A request line as an object.
        static func request(_ line: String) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }

        /// Answers a subscription or `get` with a status, and each watch with
        /// `state` under its id: a daemon that works.
        static func answering(_ state: DestinationState = .reachable) -> ScriptedDaemon.Responder {
            { _, line in
                let request = Self.request(line)
                switch request["op"] as? String {
                case "subscribe", "get": return [FakeDaemon.newerDaemonsLine]
                case "watch": return [Self.line(state, id: request["id"] as! String, target: request["target"] as! String)]
                default: return []
                }
            }
        }

        /// An error line about request `id`.
        static func refusal(_ code: String, id: String?) -> String {
            String(decoding: DaemonMessage.error(code: code, message: "refused", id: id).line().dropLast(), as: UTF8.self)
        }

        /// A daemon that works, but refuses to watch `target` (over its limits)
        /// and answers an unwatch with `unwatched`, when given.
        static func refusing(_ target: String, unwatched: String? = nil) -> ScriptedDaemon.Responder {
            { connection, line in
                let request = Self.request(line)
                switch (request["op"] as? String, request["target"] as? String) {
                case ("watch", target?): return [refusal(RequestError.tooManyWatches, id: request["id"] as? String)]
                case ("unwatch", _): return unwatched.map { [refusal($0, id: request["id"] as? String)] } ?? []
                default: return answering()(connection, line)
                }
            }
        }

        /// A session following two destinations from a daemon that refuses to
        /// watch the first.
        struct Refusal {
            let daemon: ScriptedDaemon
            let session: FollowSession
            let refused: Key
            let answered: Key
            let delivered: Delivered
        }

        static func following(
            _ source: SourcePreference, refused: String, unwatched: String? = nil
        ) throws -> Refusal {
            let daemon = try ScriptedDaemon(respond: refusing(refused, unwatched: unwatched))
            let session = try Self.session(source, [daemon.path])
            let keys = (refused: try key(refused), answered: try key("10.0.0.1:443"))
            session.remote.follow(keys.refused)
            session.remote.follow(keys.answered)
            return Refusal(
                daemon: daemon, session: session, refused: keys.refused, answered: keys.answered, delivered: start(session))
        }

        /// What a session delivered, as a test reads it.
        final class Delivered: Sendable {
            let updates = Mutex<[String]>([])
            let destinations = Mutex<[(key: Key, status: DestinationStatus)]>([])
            let statuses = Mutex<[StatusSource]>([])
            let failed = Mutex<[Key]>([])
            /// The session's run returned.
            let ended = Mutex(false)
            /// Signalled when it did, for ``finish(_:_:)``, which cannot await.
            let endedSignal = DispatchSemaphore(value: 0)
            /// Each switch of source the session said.
            let following = Mutex<[StatusSource]>([])

            func take(_ update: FollowSession.Update) {
                switch update {
                case .status(let status):
                    statuses.withLock { $0.append((try? status.status())?.source ?? .unrecognized("?")) }
                case .destination(let key, let status, _):
                    destinations.withLock { $0.append((key, status)) }
                case .destinationFailed(let key, _):
                    failed.withLock { $0.append(key) }
                case .following(let source):
                    following.withLock { $0.append(source) }
                case .problem:
                    break
                }
            }

            func answers(for key: Key) -> [DestinationStatus] {
                destinations.withLock { $0.filter { $0.key == key }.map(\.status) }
            }
        }

        /// Runs `session` on a thread of its own until it is stopped; returns
        /// what it delivers.
        static func start(_ session: FollowSession) -> Delivered {
            let delivered = Delivered()
            nonisolated(unsafe) let session = session
            startDetachedThread {
                try? session.run { update in
                    delivered.take(update)
                    return true
                }
                delivered.ended.withLock { $0 = true }
                delivered.endedSignal.signal()
            }
            return delivered
        }

        /// Stops `session` and waits (a second at most) for its thread to
        /// end, so that nothing of it outlives the test.
        static func finish(_ session: FollowSession, _ delivered: Delivered) {
            session.remote.stop()
            _ = delivered.endedSignal.wait(timeout: .now() + 1)
        }

        static func session(_ source: SourcePreference, _ paths: [String], status: StatusDetail? = .summary) throws
            -> FollowSession
        {
            try FollowSession(
                .init(source: source, socketPaths: paths, statusDetail: status, backoff: backoff),
                logger: Logger(label: "test"))
        }

        /// A status line from a daemon of another network namespace.
        static let otherNetworksLine = FakeDaemon.newerDaemonsLine.replacingOccurrences(
            of: #""online":true"#, with: #""netns":{"inode":1,"device":1,"cookie":1},"online":true"#)

        /// Answers a watch, then a status from another network: the status
        /// comes after its answer about a destination.
        static let foreignAfterAnswering: ScriptedDaemon.Responder = { _, line in
            let request = Self.request(line)
            switch request["op"] as? String {
            case "watch":
                return [Self.line(.reachable, id: request["id"] as! String, target: request["target"] as! String),
                        Self.otherNetworksLine]
            default: return []
            }
        }

        /// Nothing a daemon says counts before its status says it serves
        /// this network, as the loop reads its own: an `.automatic` session
        /// follows in-process, and the other network's answer is never
        /// delivered.
        @Test(.timeLimit(.minutes(1)))
        func anotherNetworksAnswerIsNotDeliveredBeforeTheSessionGoesInProcess() async throws {
            let daemon = try ScriptedDaemon(respond: Self.foreignAfterAnswering)
            let session = try Self.session(.automatic, [daemon.path])
            let key = try Self.key("127.0.0.1:443")
            session.remote.follow(key)
            let delivered = Self.start(session)
            defer { Self.finish(session, delivered) }
            _ = try await eventually("the in-process answer") { delivered.answers(for: key).first { $0.source == .inProcess } }
            #expect(delivered.answers(for: key).allSatisfy { $0.source == .inProcess }, "\(delivered.answers(for: key))")
        }

        @Test(.timeLimit(.minutes(1)))
        func oneConnectionCarriesTheStatusAndEveryDestination() async throws {
            let daemon = try ScriptedDaemon(respond: Self.answering())
            let session = try Self.session(.daemon, [daemon.path])
            let keys = try (1...5).map { try Self.key("10.0.0.\($0):443") }
            for key in keys { session.remote.follow(key) }
            let delivered = Self.start(session)
            defer { Self.finish(session, delivered) }
            _ = try await eventually("each destination's answer") {
                keys.allSatisfy { !delivered.answers(for: $0).isEmpty } ? true : nil
            }
            #expect(daemon.connections == 1)
            let requests = daemon.requests(of: 0).map { Self.request($0)["op"] as? String }
            #expect(requests == ["subscribe"] + Array(repeating: "watch", count: 5), "\(daemon.requests(of: 0))")
            #expect(delivered.statuses.withLock { $0 } == [.daemon])
            #expect(keys.allSatisfy { delivered.answers(for: $0).map(\.state) == [.reachable] })
        }

        @Test(.timeLimit(.minutes(1)))
        func destinationsComeAndGoOnTheSameConnection() async throws {
            let daemon = try ScriptedDaemon(respond: Self.answering())
            let session = try Self.session(.daemon, [daemon.path])
            let delivered = Self.start(session)
            defer { Self.finish(session, delivered) }
            _ = try await eventually("the status") { delivered.statuses.withLock { $0.first } }
            let key = try Self.key("10.0.0.1:22")
            session.remote.follow(key)
            _ = try await eventually("its answer") { delivered.answers(for: key).first }
            session.remote.unfollow(key)
            let unwatch = try await eventually("an unwatch") {
                daemon.requests(of: 0).map(Self.request).first { $0["op"] as? String == "unwatch" }
            }
            let watch = daemon.requests(of: 0).map(Self.request).first { $0["op"] as? String == "watch" }
            #expect(unwatch["id"] as? String == watch?["id"] as? String, "the watch's own id")
            // A line already on its way for the old id names nothing now.
            daemon.send(Self.line(.unreachable, id: watch?["id"] as? String ?? "", target: "10.0.0.1:22"))
            let again = try Self.key("10.0.0.2:22")
            session.remote.follow(again)
            _ = try await eventually("the next destination's answer") { delivered.answers(for: again).first }
            #expect(delivered.answers(for: key).map(\.state) == [.reachable], "nothing after unfollowing")
            #expect(daemon.connections == 1)
        }

        /// A daemon that restarts is sent every watch again; what it says again
        /// is not delivered again, what changed is.
        @Test(.timeLimit(.minutes(1)))
        func aReconnectionSendsTheWatchesAgainAndDropsRepeats() async throws {
            let daemon = try ScriptedDaemon(respond: Self.answering())
            let session = try Self.session(.daemon, [daemon.path])
            let keys = try ["10.0.0.1:443", "10.0.0.2:443"].map(Self.key)
            for key in keys { session.remote.follow(key) }
            let delivered = Self.start(session)
            defer { Self.finish(session, delivered) }
            _ = try await eventually("the answers") { keys.allSatisfy { !delivered.answers(for: $0).isEmpty } ? true : nil }
            daemon.hangUp(0)
            _ = try await eventually("the watches sent again") {
                daemon.requests(of: 1).filter { Self.request($0)["op"] as? String == "watch" }.count == 2 ? true : nil
            }
            let id = daemon.requests(of: 1).map(Self.request).first { $0["target"] as? String == "10.0.0.2:443" }?["id"]
            daemon.send(Self.line(.unreachable, id: id as? String ?? "", target: "10.0.0.2:443"), to: 1)
            _ = try await eventually("the change") { delivered.answers(for: keys[1]).count == 2 ? true : nil }
            #expect(delivered.answers(for: keys[0]).map(\.state) == [.reachable], "a repeat is dropped")
            #expect(delivered.answers(for: keys[1]).map(\.state) == [.reachable, .unreachable])
            #expect(delivered.statuses.withLock { $0 } == [.daemon], "the same status again is no change")
        }

        /// A restarted daemon resolves the name afresh and says `pending` first:
        /// the app keeps the answer it had rather than flashing a spinner, and
        /// hears the answer that follows.
        @Test(.timeLimit(.minutes(1)))
        func aRestartedDaemonsFirstPendingIsNotDelivered() async throws {
            let daemon = try ScriptedDaemon { connection, line in
                let request = Self.request(line)
                switch request["op"] as? String {
                case "subscribe": return [FakeDaemon.newerDaemonsLine]
                case "watch":
                    let id = request["id"] as! String
                    return connection == 0 ? [Self.line(.reachable, id: id)] : [Self.line(.pending, id: id), Self.line(.unreachable, id: id)]
                default: return []
                }
            }
            let session = try Self.session(.daemon, [daemon.path])
            let key = try Self.key("api.example.com")
            session.remote.follow(key)
            let delivered = Self.start(session)
            defer { Self.finish(session, delivered) }
            _ = try await eventually("the first answer") { delivered.answers(for: key).first }
            daemon.hangUp(0)
            _ = try await eventually("the restarted daemon's answer") { delivered.answers(for: key).count == 2 ? true : nil }
            #expect(delivered.answers(for: key).map(\.state) == [.reachable, .unreachable])
        }

        /// A daemon that refuses a watch over its limits is not asked again for
        /// it: an automatic session answers that one in-process, the others from
        /// the daemon.
        @Test(.timeLimit(.minutes(1)))
        func aRefusedWatchIsAnsweredInProcessWithoutAskingAgain() async throws {
            let fixture = try Self.following(.automatic, refused: "127.0.0.1:443")
            let (daemon, refused, answered, delivered) = (fixture.daemon, fixture.refused, fixture.answered, fixture.delivered)
            defer { Self.finish(fixture.session, fixture.delivered) }
            _ = try await eventually("both answers") {
                !delivered.answers(for: refused).isEmpty && !delivered.answers(for: answered).isEmpty ? true : nil
            }
            #expect(delivered.answers(for: refused).map(\.source) == [.inProcess])
            #expect(delivered.answers(for: answered).map(\.source) == [.daemon])
            #expect(delivered.statuses.withLock { $0 } == [.daemon], "the status from the daemon all along")
            #expect(delivered.following.withLock { $0 } == [.daemon], "one destination in-process is no switch")
            #expect(daemon.connections == 1)
            #expect(daemon.allRequests.filter { $0.contains("127.0.0.1:443") }.count == 1, "asked once")
        }

        /// A refusal about a destination already unfollowed (`unknown_id` for
        /// its unwatch, or a late `too_many_watches`) is no fault of the
        /// daemon's: the connection stays, and nothing is delivered again.
        @Test(.timeLimit(.minutes(1)))
        func aRefusalAboutAnUnfollowedDestinationKeepsTheDaemon() async throws {
            // It answers every unwatch as if the watch were gone already.
            let fixture = try Self.following(.automatic, refused: "127.0.0.1:443", unwatched: RequestError.unknownID)
            let (daemon, session, refused, answered, delivered) =
                (fixture.daemon, fixture.session, fixture.refused, fixture.answered, fixture.delivered)
            defer { Self.finish(session, delivered) }
            _ = try await eventually("both answers") {
                !delivered.answers(for: refused).isEmpty && !delivered.answers(for: answered).isEmpty ? true : nil
            }
            session.remote.unfollow(refused)
            session.remote.unfollow(answered)
            let later = try Self.key("10.0.0.2:443")
            session.remote.follow(later)
            _ = try await eventually("the next destination's answer") { delivered.answers(for: later).first }
            let unwatched = daemon.allRequests.map(Self.request).filter { $0["op"] as? String == "unwatch" }
            #expect(unwatched.count == 1, "none for what the daemon refused: \(daemon.allRequests)")
            #expect(daemon.connections == 1, "the daemon's unknown_id for an unwatched id is no failure")
            #expect(delivered.statuses.withLock { $0 } == [.daemon], "no switch to in-process and back")
            #expect(delivered.answers(for: later).map(\.source) == [.daemon])
        }

        /// Answered in-process while no daemon runs, an automatic session asks
        /// again with backoff and takes the daemon's answer once one runs.
        @Test(.timeLimit(.minutes(1)))
        func anAutomaticSessionGoesBackToADaemonThatAppears() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-follow-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            // Where the daemon will be: a link made once it runs.
            let socketPath = directory.appendingPathComponent("reachd.sock").path
            let session = try Self.session(.automatic, [socketPath])
            let key = try Self.key("127.0.0.1:443")
            session.remote.follow(key)
            let delivered = Self.start(session)
            defer { Self.finish(session, delivered) }
            _ = try await eventually("an answer computed in-process") { delivered.answers(for: key).first }
            let daemon = try ScriptedDaemon(respond: Self.answering())
            try FileManager.default.createSymbolicLink(atPath: socketPath, withDestinationPath: daemon.path)
            _ = try await eventually("the daemon's answer", timeout: .seconds(5)) {
                delivered.answers(for: key).contains { $0.source == .daemon } ? true : nil
            }
            #expect(delivered.answers(for: key).first?.source == .inProcess)
            #expect(delivered.statuses.withLock { $0 } == [.inProcess, .daemon])
            #expect(delivered.following.withLock { $0 } == [.inProcess, .daemon])
            session.remote.stop()
            _ = try await eventually("the session ends when stopped") { delivered.ended.withLock { $0 } ? true : nil }
        }

        /// A daemon that takes the connection and says nothing costs the first
        /// answer's second, then the session follows in-process, and a session
        /// following only destinations asks it for one status, not a subscription.
        @Test(.timeLimit(.minutes(1)))
        func aSilentDaemonCostsASecondThenInProcess() async throws {
            let daemon = try ScriptedDaemon { _, _ in [] }
            let session = try Self.session(.automatic, [daemon.path], status: nil)
            let key = try Self.key("127.0.0.1:443")
            session.remote.follow(key)
            let started = ContinuousClock.now
            let delivered = Self.start(session)
            defer { Self.finish(session, delivered) }
            let answer = try await eventually("an answer in-process") { delivered.answers(for: key).first }
            #expect(answer.source == .inProcess)
            #expect(ContinuousClock.now - started >= DaemonConnection.answerTimeout)
            #expect(Self.request(daemon.requests(of: 0).first ?? "")["op"] as? String == "get")
            #expect(delivered.statuses.withLock { $0 }.isEmpty, "no statuses when none were asked for")
        }

        /// The status updates a session delivered, as they came (not
        /// Sendable: the session's thread appends, under the lock).
        final class Received: @unchecked Sendable {
            private let lock = Mutex(())
            private nonisolated(unsafe) var updates: [StatusUpdate] = []
            func append(_ update: StatusUpdate) { lock.withLock { _ in updates.append(update) } }
            var all: [StatusUpdate] { lock.withLock { _ in updates } }
        }

        /// A subscription's first status, then `news`, in one answer.
        static func subscribed(then news: String) -> ScriptedDaemon.Responder {
            { _, line in Self.request(line)["op"] as? String == "subscribe" ? [FakeDaemon.newerDaemonsLine, news] : [] }
        }

        /// A reader that prints the daemon's bytes (`reachd monitor --json`)
        /// costs no decoding: news passes through as it came, and is decoded
        /// only when a later status must be compared with it.
        @Test(.timeLimit(.minutes(1)))
        func newsItsReaderPrintsAsItCameIsNeverDecoded() async throws {
            let news = FakeDaemon.newerDaemonsLine.replacingOccurrences(of: #""seq":7"#, with: #""seq":8"#)
            let daemon = try ScriptedDaemon(respond: Self.subscribed(then: news))
            let session = try Self.session(.daemon, [daemon.path], status: .full)
            let received = Received()
            let ended = Mutex(false)
            nonisolated(unsafe) let running = session
            startDetachedThread {
                try? running.run { update in
                    if case .status(let status) = update { received.append(status) }
                    return true
                }
                ended.withLock { $0 = true }
            }
            _ = try await eventually("the news") { received.all.count >= 2 ? true : nil }
            // Stopped and ended before looking: whatever the session would
            // decode after delivering, it has.
            session.remote.stop()
            _ = try await eventually("the session ends") { ended.withLock { $0 } ? true : nil }
            let updates = received.all
            // The daemon adds its network's identity to each line it sends.
            let seq8 = Array(#""seq":8"#.utf8)
            #expect(updates.count == 2 && updates[1].line?.firstRange(ofBytes: seq8) != nil, "not the news: \(updates.count)")
            #expect(updates.last?.decodedResult == nil, "the news was decoded though nothing read what it says")
        }

        /// A reader that decodes each status still has it checked whole: news
        /// that does not decode fails the daemon, and the session goes in-process.
        @Test(.timeLimit(.minutes(1)))
        func newsThatDoesNotDecodeFailsTheDaemonForAReaderThatDecodes() async throws {
            let broken = #"{"seq":"eight","source":"daemon","type":"status","version":1}"#
            let daemon = try ScriptedDaemon(respond: Self.subscribed(then: broken))
            let session = try Self.session(.automatic, [daemon.path], status: .full)
            let delivered = Self.start(session)
            defer { Self.finish(session, delivered) }
            let following = try await eventually("in-process after the broken news") {
                delivered.following.withLock { $0 }.contains(.inProcess) ? delivered.following.withLock { $0 } : nil
            }
            // It then tries the daemon again, which says the same.
            #expect(Array(following.prefix(2)) == [.daemon, .inProcess])
        }
    }
}
