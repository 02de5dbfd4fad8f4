import Foundation
import Synchronization
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// A daemon that answers every connection with one fixed line, then hangs up,
/// and counts the connections: a daemon from the future (another protocol
/// version), or one that refuses everyone. Runs on a thread of its own, so its
/// loop never occupies one of the concurrency runtime's threads.
package final class FakeDaemon: @unchecked Sendable {
    package static let fromTheFuture = #"{"type":"status","version":2}"#
    /// A status from a daemon newer than this client: keys it does not know.
    package static let newerDaemonsLine = #"{"changed_at":"2026-11-21T05:10:00.123Z","connectivity":"unknown","families":{"ipv4":{"path":{"family":"ipv4","gateway":"192.0.2.1","index":2,"interface":"eth0"},"reachability":"online","reason":null},"ipv6":{"path":null,"reachability":"local","reason":"no_route"}},"interfaces":[],"ipv4":"online","ipv6":"local","key_from_a_newer_daemon":{"nested":[1,2]},"online":true,"primary":{"family":"ipv4","gateway":"192.0.2.1","index":2,"interface":"eth0"},"reachability":"online","seq":7,"source":"daemon","type":"status","version":1}"#
    package static let refusing = #"{"type":"error","version":1,"code":"too_many_clients","message":"full"}"#

    package let path: String
    private let directory: URL
    private let listener: Int32
    private let stop: WakeSignal
    /// Shared with the thread, which must not keep the daemon itself alive.
    private final class Counter: Sendable {
        let times = Mutex<[ContinuousClock.Instant]>([])
        let requests = Mutex<[String]>([])
    }

    private let accepted = Counter()

    /// Answers every connection with `answer`. It waits for the client's
    /// request line before answering, as the daemon does; a refusal, like the
    /// daemon's, is written without reading.
    package convenience init(answering answer: String = fromTheFuture, namingNamespace: Bool = true) throws {
        try self.init(answeringInTurn: [answer], namingNamespace: namingNamespace)
    }

    /// Answers the first connection with `answers[0]`, the next with
    /// `answers[1]`, and the rest with the last: a daemon that restarts.
    /// Each answer `after` the request: a daemon slow to start. A status
    /// that names no network namespace names the client's
    /// (``NamespaceNaming``) unless `namingNamespace` is `false`: a daemon
    /// from before 0.7, or one that is not reachd.
    package init(answeringInTurn answers: [String], after delay: Duration = .zero, namingNamespace: Bool = true) throws {
        precondition(!answers.isEmpty, "a fake daemon needs an answer")
        let readsRequest = !answers.contains(Self.refusing)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-fake-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("reachd.sock").path
        listener = try UnixSocket.listen(at: path, mode: 0o666)
        stop = try WakeSignal()
        let (listener, stop, lines) = (listener, stop, answers)
        startDetachedThread { [accepted] in
            var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: stop.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            while poll(&descriptors, 2, -1) >= 0, descriptors[1].revents == 0 {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { continue }
                let line = lines[min(accepted.times.withLock { $0.count }, lines.count - 1)]
                accepted.times.withLock { $0.append(.now) }
                if readsRequest {
                    var pending = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                    var byte: UInt8 = 0
                    var request: [UInt8] = []
                    // Up to the request's newline, for a second at most.
                    while poll(&pending, 1, 1000) > 0, recv(client, &byte, 1, 0) == 1, byte != 10 { request.append(byte) }
                    accepted.requests.withLock { $0.append(String(decoding: request, as: UTF8.self)) }
                }
                if delay > .zero {
                    let (seconds, attoseconds) = delay.components
                    var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
                    nanosleep(&pause, nil)
                }
                let said = namingNamespace ? NamespaceNaming.naming(line, namespaceOf: client) : line
                try? UnixSocket.writeAll(client, Array(said.utf8) + [10])
                close(client)
            }
            close(listener)
        }
    }

    /// Connections accepted so far.
    package var connections: Int { connectionTimes.count }

    /// The request line each connection sent, without its newline.
    package var requests: [String] { accepted.requests.withLock { $0 } }

    /// When each connection was accepted.
    package var connectionTimes: [ContinuousClock.Instant] { accepted.times.withLock { $0 } }

    deinit {
        stop.signal()
        try? FileManager.default.removeItem(at: directory)
    }
}
