import Foundation
import Synchronization
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// A daemon a test scripts: it keeps its connections open, records every
/// request line each one sends, answers each through `respond`, and sends
/// any line the test pushes. What a client session is driven against, to see
/// what it asks of one connection and what it makes of the answers.
/// Runs on a thread of its own.
package final class ScriptedDaemon: @unchecked Sendable {
    /// The answers to one request line (each without its newline), given
    /// the connection's number (0 for the first accepted).
    package typealias Responder = @Sendable (_ connection: Int, _ request: String) -> [String]

    package let path: String
    private let directory: URL
    private let stop: WakeSignal
    private let wake: WakeSignal

    private final class Shared: Sendable {
        struct State {
            var requests: [[String]] = []
            var outgoing: [(connection: Int?, line: String)] = []
            var closing: Set<Int> = []
        }
        let state = Mutex(State())
    }

    private let shared = Shared()

    /// Listens at a fresh path; `respond` answers each request line.
    package init(respond: @escaping Responder) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-script-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("reachd.sock").path
        let listener = try UnixSocket.listen(at: path, mode: 0o666)
        stop = try WakeSignal()
        wake = try WakeSignal()
        let (stop, wake, shared) = (stop, wake, shared)
        startDetachedThread {
            Self.serve(listener: listener, stop: stop, wake: wake, shared: shared, respond: respond)
            close(listener)
        }
    }

    deinit {
        stop.signal()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Connections accepted so far.
    package var connections: Int { shared.state.withLock { $0.requests.count } }

    /// The request lines connection `index` sent, without newlines.
    package func requests(of index: Int) -> [String] {
        shared.state.withLock { $0.requests.indices.contains(index) ? $0.requests[index] : [] }
    }

    /// Every request line, of every connection, in order.
    package var allRequests: [String] { shared.state.withLock { $0.requests.flatMap { $0 } } }

    /// Sends `line` to connection `index`, or to every open one.
    package func send(_ line: String, to index: Int? = nil) {
        shared.state.withLock { $0.outgoing.append((index, line)) }
        wake.signal()
    }

    /// Closes connection `index`: the daemon going away, for that client.
    package func hangUp(_ index: Int) {
        _ = shared.state.withLock { $0.closing.insert(index) }
        wake.signal()
    }

    private enum Token { case listener, stop, wake, client(Int) }

    private static func serve(
        listener: Int32, stop: WakeSignal, wake: WakeSignal, shared: Shared, respond: @escaping Responder
    ) {
        var clients: [Int: (fd: Int32, pending: [UInt8])] = [:]
        defer { for client in clients.values { close(client.fd) } }
        // A status that names no namespace names the client's, as every
        // daemon since 0.7 does (``NamespaceNaming``).
        func write(_ line: String, to index: Int) {
            guard let fd = clients[index]?.fd else { return }
            try? UnixSocket.writeAll(fd, Array((NamespaceNaming.naming(line, namespaceOf: fd) + "\n").utf8))
        }
        while true {
            var set = PollSet<Token>()
            set.add(listener, .listener)
            set.add(stop.fileDescriptor, .stop)
            set.add(wake.fileDescriptor, .wake)
            for (index, client) in clients { set.add(client.fd, .client(index)) }
            guard let events = try? set.wait(until: nil) else { return }
            for event in events {
                switch event.token {
                case .stop:
                    return
                case .listener:
                    let fd = accept(listener, nil, nil)
                    guard fd >= 0 else { continue }
                    let index = shared.state.withLock { state in
                        state.requests.append([])
                        return state.requests.count - 1
                    }
                    clients[index] = (fd, [])
                case .wake:
                    wake.drain()
                    let (outgoing, closing) = shared.state.withLock { state in
                        defer {
                            state.outgoing.removeAll()
                            state.closing.removeAll()
                        }
                        return (state.outgoing, state.closing)
                    }
                    for (index, line) in outgoing {
                        for target in index.map({ [$0] }) ?? Array(clients.keys) { write(line, to: target) }
                    }
                    for index in closing {
                        if let fd = clients.removeValue(forKey: index)?.fd { close(fd) }
                    }
                case .client(let index):
                    guard var client = clients[index] else { continue }
                    var buffer = [UInt8](repeating: 0, count: 65536)
                    let count = recv(client.fd, &buffer, buffer.count, 0)
                    if count <= 0 {
                        close(client.fd)
                        clients[index] = nil
                        continue
                    }
                    client.pending += buffer[0..<count]
                    var lines: [String] = []
                    while let newline = client.pending.firstIndex(of: 10) {
                        lines.append(String(decoding: client.pending[..<newline], as: UTF8.self))
                        client.pending.removeSubrange(...newline)
                    }
                    clients[index] = client
                    for line in lines {
                        shared.state.withLock { $0.requests[index].append(line) }
                        for answer in respond(index, line) { write(answer, to: index) }
                    }
                }
            }
        }
    }
}
