import TestSupport
import Foundation
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// A raw protocol client for tests that misbehave on purpose: send garbage,
/// stop reading, read at their own pace.
final class SocketClient: @unchecked Sendable {
    let fd: Int32
    private var lines = LineBuffer(limit: 1 << 24)
    private var pending: [[UInt8]] = []

    init(path: String) throws {
        fd = try UnixSocket.connect(to: path)
    }

    /// Connected from `network`'s host namespace, as a program started
    /// there would be: the daemon answers `reach` and `watch` only for
    /// clients of its own network.
    init(in network: TestNetwork, path: String) async throws {
        fd = try await network.onThreadInHost { try UnixSocket.connect(to: path) }
    }

    deinit { close(fd) }

    /// A client subscribed to the daemon at `path`, and the first status it got.
    static func subscribed(to path: String) async throws -> (client: SocketClient, first: NetworkStatus) {
        let client = try SocketClient(path: path)
        try client.send(ClientRequest.subscribe.line)
        return (client, try await client.readStatus())
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        try UnixSocket.writeAll(fd, bytes)
    }

    /// Makes the kernel buffer for this client as small as it goes, so a client
    /// that stops reading fills it quickly.
    func shrinkReceiveBuffer() {
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The next line, or `nil` at end of stream; throws after `timeout`. Awaits
    /// between polls rather than blocking a thread of the concurrency runtime.
    func readLine(timeout: Duration = .seconds(5)) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while pending.isEmpty {
            _ = try await eventually("a line from the daemon", timeout: deadline - .now, every: .milliseconds(5)) { () -> Bool? in
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                return poll(&descriptor, 1, 0) > 0 ? true : nil
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            pending.append(contentsOf: try lines.append(chunk[0..<count]))
        }
        return String(decoding: pending.removeFirst(), as: UTF8.self)
    }

    func readMessage(timeout: Duration = .seconds(5)) async throws -> DaemonMessage? {
        guard let line = try await readLine(timeout: timeout) else { return nil }
        return try DaemonMessage.decode(Array(line.utf8))
    }

    func readStatus(timeout: Duration = .seconds(5)) async throws -> NetworkStatus {
        guard case .status(let status) = try await readMessage(timeout: timeout) else {
            throw HarnessError.commandFailed("expected a status line")
        }
        return status
    }
}
