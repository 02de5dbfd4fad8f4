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
    // A last look after the deadline, always: under make test's start-up a
    // wait's sleep can end seconds late, and a child that exited meanwhile
    // must not time out unseen (Subprocess.wait, which looked before judging
    // the deadline, did that until it waited through this).
    while true {
        do {
            if let value = try await probe() { return value }
        } catch {
            lastError = error
        }
        if ContinuousClock.now >= deadline { break }
        try await Task.sleep(for: interval)
    }
    throw HarnessError.timedOut(what + (lastError.map { " (last error: \($0))" } ?? ""))
}

/// Whether `condition` holds throughout `window`, looked at every
/// `interval` and once more when it has passed (a look that began before
/// the end does not close the window, however long it took): `false` as
/// soon as it fails. For
/// what must not happen (a second signal, another connection, a probe):
/// the window is the claim, so it is said where the test is read, and a
/// failure ends the wait at once instead of at the window's end.
package func holdsThroughout(
    _ window: Duration, every interval: Duration = .milliseconds(25), _ condition: () async throws -> Bool
) async throws -> Bool {
    let end = ContinuousClock.now + window
    while true {
        let looked = ContinuousClock.now
        guard try await condition() else { return false }
        if looked >= end { return true }
        let left = end - .now
        if left > .zero { try await Task.sleep(for: min(interval, left)) }
    }
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
