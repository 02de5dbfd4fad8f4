import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// What this kernel keeps of the slice a thread asks for (Linux 6.12 and
/// later keep it), as a thread's /proc entry says.
enum AskedTimeSlice {
    /// ``TimeSlice/short`` in nanoseconds.
    static let asked = 100_000

    /// The slice the kernel keeps for thread `pid` in nanoseconds; `nil`
    /// where its entry says none.
    static func slice(of pid: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/sched", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("se.slice") }
        return line.flatMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }
    }

    /// Whether a thread that asks is given its slice here: asked on a thread
    /// of its own, so that no thread of the test runner's is changed.
    static let kept: Bool = {
        let given = Mutex<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            if TimeSlice.request() == .granted { given.withLock { $0 = slice(of: "thread-self") } }
            done.signal()
        }
        thread.start()
        done.wait()
        return given.withLock { $0 } == asked
    }()
}

/// reachd's own loops ask the kernel for a short time slice (``TimeSlice``):
/// the daemon's, and a following command's, in-process and through the
/// daemon. bench/latency.py measures what it buys; this keeps it asked.
@Suite(
    "A short time slice for reachd's own loops", .serialized,
    .enabled(if: NamespaceSupport.available, NamespaceSupport.reason),
    .enabled(if: AskedTimeSlice.kept, "this kernel keeps no slice a thread asks for (Linux 6.12 and later do)"))
struct TimeSliceTests {
    @Test func theDaemonsLoopAsksForAShortSlice() async throws {
        let network = try await TestNetwork()
        let daemon = try await network.startDaemon()
        #expect(AskedTimeSlice.slice(of: "\(daemon.pid)") == AskedTimeSlice.asked)
    }

    @Test(arguments: [true, false])
    func aFollowingCommandAsksForAShortSlice(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon() }
        let monitor = try network.startReachd("monitor", "--json", throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon")
        _ = try await eventually("the monitor prints the current status") { monitor.outputLines.first }
        #expect(AskedTimeSlice.slice(of: "\(monitor.pid)") == AskedTimeSlice.asked)
        monitor.signal(SIGTERM)
        _ = daemon
    }
}
