import TestSupport
import Foundation
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// A child process whose output goes to files, so that neither a chatty child
/// nor a silent one can deadlock the test on a pipe.
///
/// Spawned with `posix_spawn` and an empty signal mask with default handlers,
/// as a shell would start it: the test runner blocks signals such as SIGINT,
/// and Foundation's `Process` passes that mask on, so `strace` or `timeout`
/// started through it cannot be interrupted.
final class Subprocess: @unchecked Sendable {
    let arguments: [String]
    let pid: pid_t
    private let outputPath: String
    private let errorPath: String
    private var exitStatus: Int32?

    init(_ arguments: [String]) throws {
        self.arguments = arguments
        let base = ScratchSpace.directory.appendingPathComponent("reachd-test-\(UUID().uuidString)").path
        outputPath = base + ".out"
        errorPath = base + ".err"

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        Self.keepDescriptorsFromChildren()
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, &attributes, &argv, environ)
        guard result == 0 else {
            // The child opened its output files before its exec failed.
            unlink(outputPath)
            unlink(errorPath)
            throw HarnessError.commandFailed("spawn \(arguments[0]): \(String(cString: strerror(result)))")
        }
        pid = child
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        unlink(outputPath)
        unlink(errorPath)
    }

    /// Children get stdio only. Without this a daemon started by one test would
    /// inherit another test's pipe or socket and keep it open: a reader waiting
    /// for EOF on it would wait as long as the daemon lives. The test process
    /// never execs, so close-on-exec costs it nothing.
    private static func keepDescriptorsFromChildren() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let fd = Int32(name), fd > 2 else { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
    }

    var isRunning: Bool { reap() == nil }
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    var errorOutput: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }
    var outputLines: [String] { output.split(separator: "\n").map(String.init) }

    /// Signals the child, unless it has ended and been reaped: its pid may
    /// belong to another process by then.
    func signal(_ signal: Int32) {
        guard reap() == nil else { return }
        kill(pid, signal)
    }

    /// The exit status once the child has ended (128 + N for signal N), else `nil`.
    private func reap() -> Int32? {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        let signalled = status & 0x7f
        exitStatus = signalled == 0 ? (status >> 8) & 0xff : 128 + signalled
        return exitStatus
    }

    /// Waits for the exit and returns its status, killing the child after `timeout`.
    @discardableResult
    func wait(timeout: Duration = .seconds(20)) async throws -> Int32 {
        do {
            return try await eventually("the exit", timeout: timeout, every: .milliseconds(10)) { reap() }
        } catch HarnessError.timedOut {
            kill(pid, SIGKILL)
            throw HarnessError.timedOut("\(arguments.joined(separator: " ")) ran past \(timeout)")
        }
    }

    /// Runs to completion on this thread, for the few places that cannot await
    /// (a deinit, a static check); the exit status, or -1 if it did not start.
    static func runBlocking(_ arguments: [String]) -> Int32 {
        guard let child = try? Subprocess(arguments) else { return -1 }
        var status: Int32 = 0
        guard waitpid(child.pid, &status, 0) == child.pid else { return -1 }
        child.exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return child.exitStatus!
    }

    /// Runs to completion and returns (status, stdout, stderr).
    static func run(_ arguments: [String], timeout: Duration = .seconds(20)) async throws
        -> (status: Int32, output: String, error: String)
    {
        let child = try Subprocess(arguments)
        let status = try await child.wait(timeout: timeout)
        return (status, child.output, child.errorOutput)
    }
}

extension Subprocess {
    /// The statuses a `reachd monitor --json` printed so far.
    var statuses: [NetworkStatus] {
        outputLines.compactMap { line in
            guard case .status(let status) = try? DaemonMessage.decode(Array(line.utf8)) else { return nil }
            return status
        }
    }
}
