import Foundation
import Testing
import TestSupport
@testable import Reachability

/// What one router advertisement, or one user's watches, ask of the
/// kernel's route lookup (issue 42): every name server is looked up at each
/// evaluation, and every watched address. The kernel charges each reply to
/// the lookup socket's buffer by its truesize and drops what does not fit;
/// before, that overrun was thrown out of the loop and the daemon exited
/// (40 IPv6 servers were enough), and one user's 40 watches failed every
/// other user's.
@Suite("Route lookups that overran", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct LookupOverrunTests {
    /// systemd-resolved's servers, as it writes them for its stub's users:
    /// `count` IPv6 ones, as one router advertisement's RDNSS can make it.
    static func resolvedServers(_ count: Int) -> String {
        "# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).\n" + (0..<count).map { "nameserver fd53::\(String($0 + 1, radix: 16))\n" }.joined()
    }

    /// A dual-stack host, /etc/resolv.conf pointing at resolved's stub,
    /// and a /run/systemd whose resolve/resolv.conf lists `servers`.
    static func resolvedHost(servers: Int) async throws -> (TestNetwork, etc: URL, runSystemd: URL) {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inHost("-6 addr add fd77::2/64 dev vh nodad", "-6 route add default via fd77::1")
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: "127.0.0.53")
        let runSystemd = try network.folder("run-systemd")
        let resolve = try network.folder("run-systemd/resolve")
        try resolvedServers(servers).write(to: resolve.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        return (network, etc, runSystemd)
    }

    @Test(.timeLimit(.minutes(1)), arguments: [64, 256])
    func manyNameServersAtStartAreAllJudged(servers: Int) async throws {
        let (network, etc, runSystemd) = try await Self.resolvedHost(servers: servers)
        let daemon = try await network.startDaemon([], etc: etc, runSystemd: runSystemd)
        defer { daemon.signal(SIGTERM) }
        let (status, took) = try timedDaemonStatus(at: network.socketPath)
        #expect(took < .seconds(1), "a get took \(took)")
        #expect(status.dns.servers.count == servers && status.dns.state == .ok, "\(status.dns.state), \(status.dns.servers.count) servers")
        #expect(status.dns.servers.allSatisfy { $0.state == .reachable && $0.interface == "vh" })
        #expect(daemon.isRunning, "\(daemon.errorOutput)")

        let inProcess = try await Subprocess.run(
            network.inHost(etc: etc, runSystemd: runSystemd) + [Reachd.binary, "status", "--json", "--no-daemon"])
        #expect(inProcess.status == 0 || inProcess.status == 1, "\(inProcess.error)")
        #expect(inProcess.output.contains(#""address":"fd53::\#(String(servers, radix: 16))""#), "every server judged in-process")
    }

    /// The servers arrive while the daemon runs (an RA on a running host):
    /// it judges them all and goes on answering.
    @Test(.timeLimit(.minutes(1)), arguments: [64, 256])
    func manyNameServersAppearingWhileTheDaemonRunsAreAllJudged(servers: Int) async throws {
        let (network, etc, runSystemd) = try await Self.resolvedHost(servers: 0)
        let daemon = try await network.startDaemon([], etc: etc, runSystemd: runSystemd)
        defer { daemon.signal(SIGTERM) }
        try await network.waitForStatus("no server yet") { $0.dns.state == .none }
        let written = runSystemd.appendingPathComponent("resolve/resolv.conf")
        try Self.resolvedServers(servers).write(to: written, atomically: true, encoding: .utf8)
        try await network.waitForStatus(timeout: .seconds(5), "all \(servers) servers judged") {
            $0.dns.servers.count == servers && $0.dns.state == .ok
        }
        let (_, took) = try timedDaemonStatus(at: network.socketPath)
        #expect(took < .seconds(1), "a get took \(took)")
        #expect(daemon.isRunning, "\(daemon.errorOutput)")
    }

    /// 40 IPv6 watches of one user (well within the 128 a user may hold)
    /// and another user's watch: the other's turns unreachable and back
    /// with its route, within 2 s each way.
    @Test(.timeLimit(.minutes(1)))
    func oneUsersWatchesNeverFailAnothers() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        try await network.inHost("-6 addr add fd77::2/64 dev vh nodad", "-6 route add default via fd77::1", "route add 10.99.0.0/24 via 10.77.0.1")
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGTERM) }
        func watching(as user: Int, _ targets: [String]) throws -> Subprocess {
            try Subprocess(
                ["/usr/bin/env", "ip", "netns", "exec", network.host] + TestNetwork.asUser(user)
                    + [Reachd.binary, "reach", "--watch", "--json", "--socket", network.socketPath] + targets)
        }
        let attacker = try watching(as: HostileClientTests.nobody, (1...40).map { "[fd99::\(String($0, radix: 16))]:443" })
        defer { attacker.signal(SIGKILL) }
        _ = try await eventually("the 40 watches answered") { attacker.outputLines.count >= 40 ? true : nil }
        let victim = try watching(as: 4242, ["10.99.0.1:443"])
        defer { victim.signal(SIGKILL) }
        func victimSays(_ state: DestinationState, within limit: Duration, after lines: Int) async throws {
            _ = try await eventually("uid 4242's watch says \(state)", timeout: limit) { () -> Bool? in
                victim.outputLines.dropFirst(lines).contains { line in
                    guard case .destination(let answer)? = try? DaemonMessage.decode(Array(line.utf8)) else { return false }
                    return answer.state == state
                } ? true : nil
            }
        }
        try await victimSays(.reachable, within: .seconds(5), after: 0)
        for _ in 0..<2 {
            var seen = victim.outputLines.count
            try await network.inHost("route del 10.99.0.0/24")
            try await victimSays(.unreachable, within: .seconds(2), after: seen)
            seen = victim.outputLines.count
            try await network.inHost("route add 10.99.0.0/24 via 10.77.0.1")
            try await victimSays(.reachable, within: .seconds(2), after: seen)
        }
        #expect(daemon.isRunning, "\(daemon.errorOutput)")
    }
}
