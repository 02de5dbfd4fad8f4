import Foundation

#if canImport(Glibc)
import Glibc
#endif

package enum HarnessError: Error, CustomStringConvertible {
    case timedOut(String)
    case commandFailed(String)

    package var description: String {
        switch self {
        case .timedOut(let what): "timed out: \(what)"
        case .commandFailed(let what): "command failed: \(what)"
        }
    }
}

/// Polls `probe` until it returns a value, or fails after `timeout`. Tests wait
/// on conditions, never on fixed sleeps. 30 s by default: make test starts
/// every suite at once, and in that first storm a clean clone's CI saw
/// unit tests of microseconds finish after 13 s and a process's first
/// output take over 10 s. A test that means a bound says it.
package func eventually<T>(
    _ what: String, timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(25),
    _ probe: () async throws -> T?
) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    var lastError: (any Error)?
    while ContinuousClock.now < deadline {
        do {
            if let value = try await probe() { return value }
        } catch {
            lastError = error
        }
        try await Task.sleep(for: interval)
    }
    throw HarnessError.timedOut(what + (lastError.map { " (last error: \($0))" } ?? ""))
}

/// All of a /proc file. Foundation's `String(contentsOfFile:)` stops after the
/// first page of a /proc file, whose size reads as 0 (seen with
/// /proc/self/net/netlink: 4,045 of 5,793 bytes).
package func readProcFile(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16384)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
