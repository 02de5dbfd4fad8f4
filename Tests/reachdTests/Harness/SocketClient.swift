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

    deinit { close(fd) }

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

    /// The next line, or `nil` at end of stream; throws after `timeout`.
    func readLine(timeout: Duration = .seconds(5)) throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while pending.isEmpty {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw HarnessError.timedOut("no line from the daemon") }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            guard poll(&descriptor, 1, Int32(max(1, milliseconds))) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            pending.append(contentsOf: try lines.append(chunk[0..<count]))
        }
        return String(decoding: pending.removeFirst(), as: UTF8.self)
    }

    func readMessage(timeout: Duration = .seconds(5)) throws -> DaemonMessage? {
        guard let line = try readLine(timeout: timeout) else { return nil }
        return try DaemonMessage.decode(Array(line.utf8))
    }

    func readStatus(timeout: Duration = .seconds(5)) throws -> NetworkStatus {
        guard case .status(let status) = try readMessage(timeout: timeout) else {
            throw HarnessError.commandFailed("expected a status line")
        }
        return status
    }
}
