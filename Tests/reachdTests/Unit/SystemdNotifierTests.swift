import Foundation
import Testing
import TestSupport
@testable import reachd
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The sd_notify datagrams, received on sockets this test binds.
@Suite("sd_notify")
struct SystemdNotifierTests {
    private func receive(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
    }

    @Test func speaksToAnAbstractSocket() throws {
        let name = "@reachd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = try UnixSocket.bindDatagram(at: name)
        defer { close(fd) }
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": name])
        notifier.ready(status: "online ipv4=online ipv6=local via eth0")
        #expect(receive(fd) == "READY=1\nSTATUS=online ipv4=online ipv6=local via eth0")
        notifier.stopping()
        #expect(receive(fd) == "STOPPING=1")
    }

    @Test func speaksToASocketPath() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-notify-\(getpid()).sock").path
        unlink(path)
        let fd = try UnixSocket.bindDatagram(at: path)
        defer { close(fd); unlink(path) }
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        notifier.watchdog()
        #expect(receive(fd) == "WATCHDOG=1")
        notifier.status("local ipv4=local ipv6=offline")
        #expect(receive(fd) == "STATUS=local ipv4=local ipv6=offline")
    }

    @Test func pingsAtHalfTheWatchdogIntervalAndOnlyForThisProcess() {
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "4000000"]).watchdogInterval == .seconds(2))
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "\(getpid())"])
                .watchdogInterval == .seconds(2))
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "1"]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: [:]).watchdogInterval == nil)
        #expect(!SystemdNotifier(environment: [:]).isEnabled, "outside systemd it does nothing")
    }
}

/// Under systemd, stderr is the journal: syslog priorities, no timestamps.
@Suite("Logging to the journal")
struct JournalLoggingTests {
    @Test func underTheJournalEachLineCarriesItsPriorityAndNoTimestamp() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-journal-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("stderr").path
        let socket = directory.appendingPathComponent("reachd.sock").path
        // As systemd would: stderr is a stream whose device and inode JOURNAL_STREAM names.
        let daemon = try Subprocess(["/bin/sh", "-c", """
            exec 2>\(log); JOURNAL_STREAM=$(stat -c %d:%i \(log)) exec \(Reachd.binary) daemon --socket \(socket) --no-check
            """])
        _ = try await daemonAnswers(at: socket)
        daemon.signal(SIGTERM)
        _ = try await daemon.wait(timeout: .seconds(10))
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>listening") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("<6>#") }, "the first status is logged: \(lines)")
        for line in lines {
            #expect(line.first == "<" && line.dropFirst().first?.isNumber == true && line.dropFirst(2).first == ">",
                    "a syslog priority: \(line)")
            #expect(line.matches(of: Self.timestamp).isEmpty, "no timestamp of its own; journald adds one: \(line)")
        }
    }

    static var timestamp: Regex<Substring> { /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/ }

    @Test func onATerminalEachLineHasOneTimestampAndItsLevel() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-log-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("reachd.sock").path
        let daemon = try Subprocess([Reachd.binary, "daemon", "--socket", socket, "--no-check"])
        _ = try await daemonAnswers(at: socket)
        daemon.signal(SIGTERM)
        _ = try await daemon.wait(timeout: .seconds(10))
        let lines = daemon.errorOutput.split(separator: "\n")
        #expect(lines.count >= 3, "listening, the first status, stopped: \(lines)")
        for line in lines {
            #expect(line.matches(of: Self.timestamp).count == 1 && line.prefixMatch(of: Self.timestamp) != nil,
                    "one timestamp, first: \(line)")
            #expect(line.contains("Z info ") || line.contains("Z debug ") || line.contains("Z warning "), "\(line)")
        }
    }

    @Test func aStaleJournalStreamIsNotTheJournal() {
        #expect(!DaemonLogHandler.stderrIsTheJournal("1:1"))
        #expect(!DaemonLogHandler.stderrIsTheJournal("garbage"))
        #expect(!DaemonLogHandler.stderrIsTheJournal(nil))
        #expect(DaemonLogHandler.priority(.warning) == 4 && DaemonLogHandler.priority(.info) == 6)
    }

    /// reachd.socket's descriptor and reachd-metrics.socket's, told apart by
    /// their names, in whichever order systemd passes them.
    @Test func passedSocketsAreToldApartByName() {
        let pid = getpid()
        func passed(_ names: String?, count: Int = 2, pid listenPID: Int32 = pid) -> SocketActivation {
            var environment = ["LISTEN_PID": "\(listenPID)", "LISTEN_FDS": "\(count)"]
            environment["LISTEN_FDNAMES"] = names
            return SocketActivation.passedSockets(environment: environment, pid: pid)
        }
        #expect(passed("reachd.socket:metrics") == SocketActivation(socket: 3, metrics: 4))
        #expect(passed("metrics:reachd.socket") == SocketActivation(socket: 4, metrics: 3))
        #expect(passed(nil, count: 1) == SocketActivation(socket: 3, metrics: nil), "an older systemd names none")
        #expect(passed("metrics", count: 1) == SocketActivation(socket: nil, metrics: 3), "a scrape started the daemon")
        #expect(passed("reachd.socket:metrics", pid: pid + 1) == SocketActivation(), "another process's")
    }
}
