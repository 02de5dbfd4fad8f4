import Foundation
import Testing
import TestSupport
@testable import Reachability

/// `reachd status` against a daemon it does not start.
@Suite("reachd status")
struct StatusCommandTests {
    /// A status from a newer daemon: a key this client does not know, and a
    /// timestamp that a decode and re-encode could round.

    @Test func jsonIsTheDaemonsLineAsReceived() async throws {
        #expect(throws: Never.self) { try DaemonMessage.decode(Array(FakeDaemon.newerDaemonsLine.utf8)) }
        let daemon = try FakeDaemon(answering: FakeDaemon.newerDaemonsLine)
        let result = try await Subprocess.run([Reachd.binary, "status", "--json", "--socket", daemon.path])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == NamespaceNaming.namingThisNamespace(FakeDaemon.newerDaemonsLine) + "\n",
                "printed as received, unknown keys and all")
        #expect(result.error.isEmpty, "answered by the daemon: no fallback notice")
    }

    /// A status that names no network namespace proves nothing of the
    /// network it describes: named, the daemon is an error; by default,
    /// the answer is computed in-process.
    @Test func aStatusNamingNoNamespaceIsNotTaken() async throws {
        let daemon = try FakeDaemon(answering: FakeDaemon.newerDaemonsLine, namingNamespace: false)
        let said = "the reachd daemon at \(daemon.path) does not say which network namespace it serves"
        let named = try await Subprocess.run([Reachd.binary, "status", "--json", "--socket", daemon.path])
        #expect(named.status == 2 && named.error.contains(said), "\(named)")
        let byDefault = try await Subprocess.run(
            ["/usr/bin/env", "REACHD_SOCKET=\(daemon.path)", Reachd.binary, "status", "--json"])
        #expect(byDefault.output.contains(#""source":"embedded""#) && byDefault.error.contains(said), "\(byDefault)")
    }
}

@Suite("reachd status IFACE", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct StatusInterfaceTests {
    @Test func oneInterfaceAsNetworkctlShowsIt() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let shown = try await network.reachd("status", "vh", "--no-daemon")
        #expect(shown.status == 0)
        #expect(shown.output.hasPrefix("● 2: vh\n"), "\(shown.output)")
        #expect(shown.output.contains("   Addresses: 10.77.0.2/24"))
        #expect(shown.output.contains("  Routes out: IPv4 via gateway 10.77.0.1 (primary)"))
        let json = try await network.reachd("status", "vh", "--json", "--no-daemon")
        let link = try JSONDecoder().decode(InterfaceStatus.self, from: Data(json.output.utf8))
        #expect(link.name == "vh" && link.carrier && link.metered == .no)
        let missing = try await network.reachd("status", "eth9", "--no-daemon")
        #expect(missing.status == 2 && missing.error.contains("no interface eth9; the host has lo, vh"), "\(missing.error)")
        // The exit code, as the help says: 0 when the host is online through
        // it. An interface no route out leaves through is not; nor is any
        // on an offline host (both exited 0).
        #expect(try await network.reachd("status", "lo", "--no-daemon").status == 1)
        try await network.inHost("route del default")
        let offline = try await network.reachd("status", "vh", "--no-daemon")
        #expect(offline.status == 1 && offline.output.hasPrefix("● 2: vh\n"), "\(offline)")
    }
}

/// Which daemon a client asks: the defaults fall back in-process, a named
/// socket must answer (as nm-online errs without NetworkManager), and
/// `--no-daemon` asks none.
@Suite("--socket and --no-daemon")
struct DaemonChoiceTests {
    static let nowhere = "/tmp/reachd-nobody-listens-\(getpid()).sock"

    @Test(arguments: [["status"], ["status", "--json"], ["monitor"], ["wait-online", "-t", "5"], ["check"]])
    func aNamedSocketWithoutADaemonIsAnErrorThatSaysWhatToDo(_ command: [String]) async throws {
        let result = try await Subprocess.run([Reachd.binary] + command + ["--socket", Self.nowhere], timeout: .seconds(10))
        #expect(result.status == 2, "\(result.output)\(result.error)")
        #expect(result.output.isEmpty, "no answer on stdout: \(result.output)")
        #expect(result.error.contains(Self.nowhere), "names the socket: \(result.error)")
        #expect(result.error.contains("reachd daemon"), "says how to start one: \(result.error)")
    }

    @Test func aNamedDaemonThatDoesNotAnswerIsAnErrorWithinTheDeadline() async throws {
        let stopped = try FakeDaemon(answering: FakeDaemon.refusing)
        // Starting the binary alone took up to 7 s when CI ran every suite
        // at once, so what is bounded is the time beyond a start measured
        // in the same moment: a refusal is final, with no retry or wait.
        let startOnly = ContinuousClock.now
        _ = try await Subprocess.run([Reachd.binary, "--version"])
        let startCost = ContinuousClock.now - startOnly
        let started = ContinuousClock.now
        let result = try await Subprocess.run([Reachd.binary, "status", "--socket", stopped.path])
        let spent = ContinuousClock.now - started
        #expect(result.status == 2)
        #expect(result.error.contains("too_many_clients"), "\(result.error)")
        #expect(spent - startCost < .seconds(3), "took \(spent), of which starting the binary \(startCost)")
    }

    @Test func theDefaultSocketFallsBackInProcessAndSaysSo() async throws {
        let result = try await Subprocess.run(
            ["/usr/bin/env", "\(SocketPath.environmentVariable)=\(Self.nowhere)", Reachd.binary, "status", "--json"])
        #expect(result.status == 0 || result.status == 1, "\(result.error)")
        #expect(result.output.contains(#""source":"embedded""#))
        #expect(result.error.contains("no daemon at \(Self.nowhere); computed in-process"), "\(result.error)")
    }

    @Test func noDaemonComputesInProcessWithoutANotice() async throws {
        let result = try await Subprocess.run(
            ["/usr/bin/env", "\(SocketPath.environmentVariable)=\(Self.nowhere)", Reachd.binary, "status", "--json", "--no-daemon"])
        #expect(result.status == 0 || result.status == 1, "\(result.error)")
        #expect(result.output.contains(#""source":"embedded""#))
        #expect(result.error.isEmpty, "asked for in-process, told nothing: \(result.error)")
    }

    @Test(arguments: [["status", "--no-daemon", "--socket", nowhere], ["check", "--no-daemon"]])
    func contradictionsAreUsageErrors(_ arguments: [String]) async throws {
        let result = try await Subprocess.run([Reachd.binary] + arguments)
        #expect(result.status == 2)
        #expect(result.error.contains("--no-daemon"), "\(result.error)")
    }
}
