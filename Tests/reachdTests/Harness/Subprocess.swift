import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process whose output goes to files, so that neither a chatty child
/// nor a silent one can deadlock the test on a pipe.
final class Subprocess: @unchecked Sendable {
    let arguments: [String]
    private let process = Process()
    private let outputURL: URL
    private let errorURL: URL

    init(_ arguments: [String]) throws {
        self.arguments = arguments
        let directory = FileManager.default.temporaryDirectory
        let id = UUID().uuidString
        outputURL = directory.appendingPathComponent("reachd-test-\(id).out")
        errorURL = directory.appendingPathComponent("reachd-test-\(id).err")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: outputURL)
        try? FileManager.default.removeItem(at: errorURL)
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var output: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }
    var errorOutput: String { (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "" }
    var outputLines: [String] { output.split(separator: "\n").map(String.init) }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the exit and returns its status, killing the child after `timeout`.
    @discardableResult
    func wait(timeout: Duration = .seconds(20)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw HarnessError.timedOut("\(arguments.joined(separator: " ")) ran past \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return process.terminationStatus
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

enum HarnessError: Error, CustomStringConvertible {
    case timedOut(String)
    case commandFailed(String)

    var description: String {
        switch self {
        case .timedOut(let what): "timed out: \(what)"
        case .commandFailed(let what): "command failed: \(what)"
        }
    }
}

/// Polls `probe` until it returns a value, or fails after `timeout`. Tests wait
/// on conditions, never on fixed sleeps.
func eventually<T>(
    _ what: String, timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(25),
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
