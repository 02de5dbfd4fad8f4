import Foundation
import Testing
import TestSupport
@testable import Reachability
@testable import reachd

#if canImport(Glibc)
import Glibc
#endif

/// Bytes from outside (a daemon on the socket, a client's request, a
/// configuration file, a portal) never reach a terminal or the log raw, and
/// JSON output stays the daemon's bytes exactly.
@Suite("Text from outside reaches terminals and logs escaped")
struct HostileTextTests {
    /// An interface name that clears the screen and forges a line, a
    /// portal URL in red and a reason that forges another line: what a
    /// program posing as the daemon could send.
    static func hostileStatusLine() -> String {
        var status = NetworkStatus.built(
            ipv4: .through(NetworkPath(interface: "eth0\u{1B}[2J", index: 2, family: .ipv4, gateway: "192.0.2.1")),
            connectivity: .portal, portalURL: "http://portal.example/\u{1B}[31mred",
            interfaces: [
                InterfaceStatus(name: "eth0\u{1B}[2J\nState: online via nothing", index: 2, up: true, carrier: true,
                                operstate: "up\u{9B}2J", loopback: false,
                                addresses: [InterfaceAddress(address: "192.0.2.10", prefix: 24, family: .ipv4, scope: "global")]),
            ],
            seq: 7, changedAt: Date(timeIntervalSince1970: 1_790_000_000.25))
        status.connectivityReason = .unrecognized("why\u{1B}[2J\nDNS: forged")
        return String(decoding: DaemonMessage.status(status).line().dropLast(), as: UTF8.self)
    }

    @Test func aStatusFromAHostileDaemonIsPrintedEscapedAndItsJSONExactly() async throws {
        let line = Self.hostileStatusLine()
        let daemon = try FakeDaemon(answering: line)
        let human = try await Subprocess.run([Reachd.binary, "status", "--socket", daemon.path])
        #expect(!human.output.utf8.contains(0x1B), "no escape character reaches the terminal: \(human.output)")
        #expect(human.output.contains("eth0\\x1b[2J\\nState: online via nothing"), "shown, escaped: \(human.output)")
        #expect(human.output.split(separator: "\n").filter { $0.hasPrefix("State:") }.count == 1, "no forged line: \(human.output)")
        #expect(human.output.split(separator: "\n").filter { $0.hasPrefix("DNS:") }.count == 1, "no forged line: \(human.output)")
        #expect(human.output.contains("(why\\x1b[2J\\nDNS: forged)"), "the reason, shown escaped: \(human.output)")
        #expect(!human.output.contains("portal.example"), "a portal URL that is no URL is not offered")
        let short = try await Subprocess.run([Reachd.binary, "status", "--short", "--socket", daemon.path])
        #expect(!short.output.utf8.contains(0x1B) && short.output.split(separator: "\n").count == 1, "\(short.output)")
        let json = try await Subprocess.run([Reachd.binary, "status", "--json", "--socket", daemon.path])
        #expect(json.output == NamespaceNaming.namingThisNamespace(line) + "\n", "the daemon's bytes, exactly")
    }

    @Test func aClientsRequestIsLoggedEscapedOnOneLine() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-text-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("reachd.sock").path
        let daemon = try Subprocess([Reachd.binary, "daemon", "--socket", socket, "--no-check", "--log-level", "debug"])
        _ = try await daemonAnswers(at: socket)
        let client = try SocketClient(path: socket)
        try client.send(#"{"op":"\u001b[31m\n2026-01-01T00:00:00.000Z critical forged entry"}"# + "\n")
        _ = try await eventually("the rejection is logged") { daemon.errorOutput.contains("rejected a client request") ? true : nil }
        daemon.signal(SIGTERM)
        _ = try await daemon.wait(timeout: .seconds(10))
        let log = daemon.errorOutput
        #expect(!log.utf8.contains(0x1B), "\(log)")
        #expect(!log.split(separator: "\n").contains { $0.contains("critical forged entry") && !$0.contains("rejected") },
                "the request's newline made no line of its own: \(log)")
        #expect(log.contains("\\x1b[31m\\n2026-01-01"), "shown, escaped: \(log)")
    }

    @Test func aConfigurationValueIsQuotedEscaped() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-\(UUID().uuidString).conf").path
        try "[connectivity]\nenabled = \u{1B}]0;pwned\u{7}\u{9B}2J\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        let result = try await Subprocess.run([Reachd.binary, "daemon", "--config", path, "--socket", path + ".sock"])
        #expect(result.status == 2)
        #expect(result.error.contains(#"enabled = \x1b]0;pwned\x07\xc2\x9b2J is not yes or no"#), "\(result.error)")
        #expect(!result.error.utf8.contains(0x1B) && !result.error.utf8.contains(0x07), "\(result.error)")
    }

    @Test func statusForSystemdCannotAddAnAssignment() throws {
        let name = "@reachd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = try UnixSocket.bindDatagram(at: name)
        defer { close(fd) }
        SystemdNotifier(environment: ["NOTIFY_SOCKET": name]).status("portal=http://x/\nWATCHDOG=1")
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        #expect(String(decoding: buffer[0..<max(count, 0)], as: UTF8.self) == "STATUS=portal=http://x/\\nWATCHDOG=1")
    }
}

/// `reachd status` against a daemon newer than itself.
@Suite("A newer daemon")
struct NewerDaemonCommandTests {
    /// New values in every enum-typed key and new keys at several depths.
    static let futureLine = #"{"changed_at":"2026-11-21T05:10:00.123Z","connectivity":"captive_with_grace","families":{"ipv4":{"path":{"family":"ipv4","gateway":"192.0.2.1","index":2,"interface":"eth0","mtu":1500},"reachability":"online","reason":null},"ipv6":{"path":null,"reachability":"site","reason":"rate_limited"},"mptcp":{}},"interfaces":[{"addresses":[{"address":"192.0.2.10","family":"ipv4","prefix":24,"scope":"nowhere"},{"address":"aa:bb","family":"mac","prefix":0,"scope":"link"}],"carrier":true,"index":2,"kind":"veth","loopback":false,"metered":"capped","name":"eth0","operstate":"warming","up":true}],"ipv4":"online","ipv6":"site","metered":true,"new_top_level":{"x":[1]},"online":false,"portal_url":null,"primary":{"family":"ipv4","gateway":"192.0.2.1","index":2,"interface":"eth0"},"reachability":"online","seq":9,"source":"cache","type":"status","version":1}"#

    /// Needs no namespace: the monitor computes in-process from netlink, as any user may.
    @Test func theCommandKeepsWarningsOffStdout() async throws {
        // An automatic monitor warns of the mismatch and carries on in-process;
        // the warning goes to stderr, so stdout stays pure JSON lines.
        let daemon = try FakeDaemon()
        let monitor = try Subprocess(
            ["/usr/bin/env", "\(SocketPath.environmentVariable)=\(daemon.path)", Reachd.binary, "monitor", "--json"])
        _ = try await eventually("a status from the in-process monitor") { monitor.outputLines.first }
        _ = try await eventually("the warning") { monitor.errorOutput.contains("protocol version 2") ? true : nil }
        for line in monitor.outputLines {
            guard case .status = try DaemonMessage.decode(Array(line.utf8)) else {
                Issue.record("not a status line on stdout: \(line)")
                continue
            }
        }
        monitor.signal(SIGTERM)
    }

    @Test func statusShowsANewerDaemonsAnswerInsteadOfFallingBack() async throws {
        let daemon = try FakeDaemon(answering: Self.futureLine)
        let human = try await Subprocess.run([Reachd.binary, "status", "--socket", daemon.path])
        #expect(human.status == 1, "an unrecognized verdict is not online: \(human.output) \(human.error)")
        #expect(!human.error.contains("cannot read"), "\(human.error)")
        #expect(human.output.contains("Connectivity: captive_with_grace") && human.output.contains("Source: cache"), "\(human.output)")
        #expect(human.output.contains("IPv6: site (rate_limited)") && human.output.contains("(metered)"), "\(human.output)")
        let json = try await Subprocess.run([Reachd.binary, "status", "--json", "--socket", daemon.path])
        #expect(json.output == NamespaceNaming.namingThisNamespace(Self.futureLine) + "\n")
    }

    /// One read bringing a status and then a line of a type this version
    /// doesn't know: the status is the answer, not lost behind it.
    @Test func aLineOfAnUnknownTypeDoesNotHideTheStatusBeforeIt() async throws {
        let daemon = try FakeDaemon(answering: Self.futureLine + "\n" + #"{"type":"forecast","version":1,"id":"x"}"#)
        let json = try await Subprocess.run([Reachd.binary, "status", "--json", "--socket", daemon.path])
        #expect(json.output == NamespaceNaming.namingThisNamespace(Self.futureLine) + "\n", "\(json.output) \(json.error)")
    }

    /// A daemon that predates summaries answers a summary subscription with
    /// full statuses: `monitor --json --summary` still prints summaries.
    @Test func aSummaryFromADaemonThatPredatesThemIsMadeByTheClient() async throws {
        let daemon = try FakeDaemon(answering: FakeDaemon.newerDaemonsLine)
        let monitor = try Subprocess([Reachd.binary, "monitor", "--json", "--summary", "--socket", daemon.path])
        defer { monitor.signal(SIGTERM) }
        let first = try await eventually("a status") { monitor.outputLines.first }
        #expect(!first.contains("\"interfaces\"") && first.contains(#""detail":"summary""#), "\(first)")
        #expect(first.contains(#""seq":7"#) && first.contains(#""source":"daemon""#), "\(first)")
        #expect(daemon.requests.first == #"{"op":"subscribe","detail":"summary"}"#, "\(daemon.requests)")
    }
}
