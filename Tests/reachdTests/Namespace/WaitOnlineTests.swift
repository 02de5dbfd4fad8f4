import Foundation
import Testing
import TestSupport
@testable import Reachability
@testable import reachd

@Suite("reachd wait-online", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct WaitOnlineTests {
    @Test(arguments: [false, true])
    func returnsWhenADefaultRouteAppears(throughDaemon: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        var daemon: Subprocess?
        if throughDaemon { daemon = try await network.startDaemon() }
        let source = throughDaemon ? "--socket=\(network.socketPath)" : "--no-daemon"
        let waiter = try network.startReachd("wait-online", "--timeout", "15", source)
        // Still waiting: nothing is online yet.
        #expect(try await holdsThroughout(.milliseconds(300)) { waiter.isRunning }, "\(waiter.errorOutput)")
        try await network.inHost("route add default via 10.77.0.1")
        #expect(try await waiter.wait(timeout: .seconds(5)) == 0)
        #expect(waiter.output.contains("online: IPv4 via vh, gateway 10.77.0.1"))
        _ = daemon
    }

    @Test func timesOutWithExitCodeOne() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let started = ContinuousClock.now
        let result = try await network.reachd("wait-online", "--timeout", "0.5")
        #expect(result.status == 1)
        #expect(result.error.contains("timed out after 0.5 s"))
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func onADualStackHostItNamesThePathStatusNames() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inHost("-6 addr add fd77::2/64 dev vh nodad", "-6 route add default via fd77::1")
        let status = try await network.waitForStatus(inProcess: true, "both online") { $0.ipv6.reachability == .online }
        let wait = try await network.reachd("wait-online", "-t", "5", "--no-daemon")
        #expect(wait.status == 0)
        #expect(wait.output.contains("online: IPv6 via vh, gateway fd77::1"), "\(wait.output)")
        #expect(status.primary?.family == .ipv6, "status names the same")
    }

    @Test func theFamilyAndInterfaceFiltersAreHonoured() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        #expect(try await network.reachd("wait-online", "--ipv4", "--interface", "vh", "--quiet", "--timeout", "5").status == 0)
        let ipv6 = try await network.reachd("wait-online", "--ipv6", "--timeout", "0.3")
        #expect(ipv6.status == 1, "only IPv4 is online")
        #expect(ipv6.error.contains("waiting for IPv6"))
        let other = try await network.reachd("wait-online", "--interface", "eth9", "--timeout", "0.3", "--quiet")
        #expect(other.status == 1)
        #expect(other.error.isEmpty && other.output.isEmpty, "--quiet prints nothing")
    }

    /// `--quiet` is quiet whatever the daemon does: one at the socket path
    /// that serves another network namespace was a warning on stderr.
    @Test func quietSaysNothingOfADaemonOfAnotherNetwork() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let other = try await TestNetwork()
        let daemon = try await other.startDaemon()
        defer { daemon.signal(SIGTERM) }
        let quiet = try await network.reachd(
            defaultSocket: other.socketPath, "wait-online", "--interface", "eth9", "--timeout", "0.3", "--quiet")
        #expect(quiet.status == 1 && quiet.error.isEmpty && quiet.output.isEmpty, "--quiet prints nothing: \(quiet)")
        let told = try await network.reachd(defaultSocket: other.socketPath, "wait-online", "--interface", "eth9", "--timeout", "0.3")
        #expect(told.error.split(separator: "\n").filter { $0.contains("serves another network namespace") }.count == 1,
                "without it, said once: \(told.error)")
    }

    @Test func severalInterfacesAndIgnoreOnARealLink() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        // Carrier now, a route out only later: all of them waits for the route.
        let waiter = try network.startReachd("wait-online", "-i", "vh:carrier", "-i", "vh", "-t", "15", "--no-daemon")
        let carrier = try await network.reachd("wait-online", "-i", "vh:carrier", "-t", "5", "--no-daemon")
        #expect(carrier.status == 0 && carrier.output == "vh: carrier\n", "\(carrier.output)\(carrier.error)")
        let ignored = try await network.reachd("wait-online", "--ignore", "vh", "-t", "0.3", "--no-daemon")
        #expect(ignored.status == 1 && ignored.error.contains("through an interface other than vh"))
        #expect(try await holdsThroughout(.milliseconds(300)) { waiter.isRunning }, "vh carries no route out yet")
        try await network.inHost("route add default via 10.77.0.1")
        #expect(try await waiter.wait(timeout: .seconds(5)) == 0)
        #expect(waiter.output == "vh: carrier\nonline: IPv4 via vh, gateway 10.77.0.1\n", "in the order given: \(waiter.output)")
    }
}

@Suite("The command line")
struct CommandLineTests {
    private func reachd(_ arguments: String...) async throws -> (status: Int32, output: String, error: String) {
        try await reachd(arguments)
    }

    private func reachd(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
        try await Subprocess.run([Reachd.binary] + arguments)
    }

    @Test(arguments: ["status", "check", "monitor", "wait-online", "daemon"])
    func everySubcommandsHelpHasExamples(subcommand: String) async throws {
        let help = try await reachd(subcommand, "--help")
        #expect(help.status == 0)
        #expect(help.output.contains("Examples:"))
        #expect(help.output.contains("reachd \(subcommand)"))
    }

    /// No option's default is printed twice: ours in its words ("Default:
    /// 10."), and the parser's "(default: 10.0)" after it.
    @Test(arguments: ["status", "check", "reach", "monitor", "wait-online", "daemon"])
    func noHelpSaysADefaultTwice(subcommand: String) async throws {
        let help = try await reachd(subcommand, "--help")
        #expect(help.status == 0)
        // One entry per option: from a line starting with "-" to the next.
        var entries: [String] = []
        for line in help.output.split(separator: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("-") { entries.append("") }
            if !entries.isEmpty { entries[entries.count - 1] += line.trimmingCharacters(in: .whitespaces) + " " }
        }
        #expect(entries.count > 2, "\(help.output)")
        for entry in entries {
            #expect(!(entry.contains("Default:") && entry.contains("(default:")), "\(entry)")
        }
    }

    /// Each mistake a new user made with 0.8 gets a message that says what
    /// was wrong and what to do, and an option that would do nothing in a
    /// combination is refused. Each of these said something else before:
    /// "File name too long", "Missing value", a port "//example.com/", "no
    /// address" for a literal, or nothing at all.
    @Test(arguments: [
        (["status", "--socket", ""], "--socket needs a path"),
        (["daemon", "--socket", ""], "--socket needs a path"),
        (["daemon", "--max-clients", "-1"], "--max-clients must be at least 1, not -1"),
        (["daemon", "--max-watches", "-3"], "--max-watches must be at least 1, not -3"),
        (["reach", "8.8.8.8", "-6"], "8.8.8.8 is an IPv4 address, and -6 counts IPv6 addresses only"),
        (["wait-online", "--host", "fd00::1", "-4"], "fd00::1 is an IPv6 address, and -4 counts IPv4 addresses only"),
        (["monitor", "--summary"], "--summary shapes the statuses --json prints"),
        (["wait-online", "--any"], "--any returns when one of several --interface is ready"),
        (["check", "--no-daemon"], "Unknown option '--no-daemon'"),
        (["reach", "--socket", "/etc/passwd", "10.0.0.1"], "/etc/passwd is not a socket"),
        (["check", "--socket", "/etc/passwd"], "/etc/passwd is not a socket"),
        (["status", "--socket", "/nonexistent/reachd.sock"], "start one with `reachd daemon --socket /nonexistent/reachd.sock`"),
    ])
    func mistakesGetAMessageThatSaysWhatToDo(arguments: [String], says: String) async throws {
        let result = try await reachd(arguments)
        #expect(result.status == 2, "\(arguments): \(result)")
        #expect(result.error.contains(says), "\(arguments): \(result.error)")
    }

    /// A URL names its server: the one a user copies from a browser.
    @Test func aURLIsATargetForItsServer() throws {
        #expect(try ReachCommand.destination("http://example.com/items?x=1").description == "example.com:80")
        #expect(try ReachCommand.destination("https://[fd00::10]:8443/").description == "[fd00::10]:8443")
        #expect(throws: (any Error).self) { try ReachCommand.destination("ftp://example.com/") }
    }

    @Test func theRootHelpListsTheSubcommandsAndExitCodes() async throws {
        let help = try await reachd("--help")
        #expect(help.status == 0)
        for subcommand in ["status", "monitor", "wait-online", "daemon"] {
            #expect(help.output.contains(subcommand))
        }
        #expect(help.output.contains("0 online"))
    }

    @Test func versionPrints() async throws {
        let version = try await reachd("--version")
        #expect(version.status == 0)
        #expect(version.output.trimmingCharacters(in: .whitespacesAndNewlines) == ReachdVersion.current)
    }

    @Test func usageErrorsExitTwoAndSayWhatIsWrong() async throws {
        let both = try await reachd("wait-online", "--ipv4", "--ipv6")
        #expect(both.status == 2)
        #expect(both.error.contains("--ipv4 and --ipv6 exclude each other"))
        let unknown = try await reachd("status", "--frobnicate")
        #expect(unknown.status == 2)
        #expect(unknown.error.contains("--frobnicate"))
        let negative = try await reachd("wait-online", "--timeout", "-3")
        #expect(negative.status == 2)
        #expect(negative.error.contains("--timeout must be 0 (no limit) or a number of seconds from 0.001 to 31536000, not -3"),
                "about the timeout, not an unknown flag: \(negative.error)")
    }

    /// Each of these trapped (exit 132, SIGILL) converting seconds to
    /// milliseconds before it could be refused.
    @Test(arguments: [
        ["wait-online", "--timeout", "1e300"], ["wait-online", "--timeout", "inf"], ["wait-online", "--timeout", "nan"],
        ["daemon", "--idle-timeout", "1e300"], ["daemon", "--check-interval", "1e300"],
        ["daemon", "--check-timeout", "1e300"], ["daemon", "--check-interval", "0.0001"],
    ])
    func hugeTimeValuesAreUsageErrorsThatNameTheRange(arguments: [String]) async throws {
        let result = try await reachd(arguments)
        #expect(result.status == 2, "\(arguments): \(result.error)")
        #expect(result.error.contains("\(arguments[1]) must be ") && result.error.contains("a number of seconds from "),
                "names the option and the range: \(result.error)")
    }

    @Test func waitOnlineTakesTheShortFlagsAdminsKnow() async throws {
        // As systemd-networkd-wait-online and nm-online spell them.
        let parsed = try WaitOnlineCommand.parse(["-4", "-t", "5", "-i", "eth0", "-q"])
        #expect(parsed.ipv4 && parsed.timeoutDuration == .seconds(5) && parsed.interface == [InterfaceCondition(name: "eth0")] && parsed.quiet)
        #expect(try WaitOnlineCommand.parse(["-6"]).families == [.ipv6])
        #expect(try WaitOnlineCommand.parse([]).families == [.ipv6, .ipv4], "the order status names the primary path in")
    }

    @Test func completionOffersInterfaceNamesAndSocketFiles() async throws {
        // As the bash script asks: the word, then the cursor's word index and offset in it.
        let names = try await reachd("---completion", "wait-online", "--", "--interface", "2", "0")
        #expect(names.output.split(separator: "\n").contains("lo"), "\(names.output)")
        let bash = try await reachd("--generate-completion-script", "bash")
        let socket = try #require(bash.output.range(of: "'--socket')\n"))
        #expect(bash.output[socket.upperBound...].hasPrefix("        __reachd_add_completions -f"), "files for --socket")
    }
}
