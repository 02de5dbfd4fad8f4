import Foundation
import Testing
import TestSupport
@testable import Reachability

/// A host that wakes from suspend may wake on another network, or on the
/// same one gone dead, and no route need change: logind's word on the
/// system bus starts a check.
@Suite(
    "Resume from suspend", .serialized,
    .enabled(if: NamespaceSupport.available, NamespaceSupport.reason),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"), "needs dbus-daemon (make test installs it)"))
struct ResumeFromSuspendTests {
    /// A daemon with a check server and a system bus of the test's own, the
    /// check full and logind's signal watched.
    static func daemonWatchingTheBus() async throws -> (TestNetwork, TestSystemBus, CheckServer, Subprocess) {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let bus = try await TestSystemBus(in: network.directory)
        let server = try await CheckServer(in: network, answering: .init(status: 204))
        let daemon = try await network.startDaemon(
            ["--check-url", server.url], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        try await network.waitForStatus("full") { $0.connectivity == .full }
        _ = try await eventually("the daemon watches the signal") {
            daemon.errorOutput.contains("watching logind's sleep signal") ? true : nil
        }
        return (network, bus, server, daemon)
    }

    /// Going to sleep is no news; waking is, and is probed at once (within
    /// the 5 s spacing of the probe the daemon made at its start). Before,
    /// the next probe was the scheduled one, 300 s away.
    @Test(.timeLimit(.minutes(1)))
    func logindsResumeSignalStartsOneProbe() async throws {
        let (network, bus, server, daemon) = try await Self.daemonWatchingTheBus()
        defer { daemon.signal(SIGTERM) }
        let before = server.requests
        // Connected, the matches added: the bus costs nothing while nothing
        // is said to it, though clients come and go on it (each a change of
        // a name's owner, which a match on every name would wake for).
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") {
            // Long enough for strace to attach and the clients to come and go
            // under load: a clean-clone CI run took 3.4 s over both.
            let window = 6
            let tracing = ContinuousClock.now
            async let calls = QuietClientTests.systemCalls(of: daemon.pid, seconds: window)
            try await QuietClientTests.traced(daemon.pid)
            try await bus.comeAndGo(count: 20)
            // strace started after `tracing`: the clients came and went while it watched.
            #expect(ContinuousClock.now - tracing < .seconds(window), "the bus's clients outlasted the trace")
            let seen = try await calls
            #expect(seen.isEmpty, "system calls while idle:\n\(seen.joined(separator: "\n"))")
        }

        try await bus.prepareForSleep(true)
        #expect(try await holdsThroughout(.seconds(6)) { server.requests == before }, "going to sleep is no reason to probe")
        try await bus.prepareForSleep(false)
        _ = try await eventually("the probe on waking", timeout: .seconds(3)) { server.requests > before ? true : nil }
        #expect(daemon.errorOutput.contains("the host resumed from suspend"), "\(daemon.errorOutput.suffix(1500))")
        #expect(try await holdsThroughout(.seconds(1)) { server.requests == before + 1 }, "\(server.requests - before) probes")
        withExtendedLifetime((network, bus, server)) {}
    }

    /// Any user may send logind's signal to the daemon's unique name, and
    /// the bus delivers it: 100 of them gave 100 resumes in 0.34 s. Only
    /// the owner of logind's name is heard now; the real one still is.
    @Test(.timeLimit(.minutes(1)))
    func aResumeSpoofedByAnotherUserIsNotHeard() async throws {
        let (network, bus, server, daemon) = try await Self.daemonWatchingTheBus()
        defer { daemon.signal(SIGTERM) }
        // Past the 5 s spacing of the first probe, so a resume would probe at once.
        try await Task.sleep(for: .seconds(5))
        let before = server.requests
        try await bus.spoofResume(as: HostileClientTests.nobody, count: 50)
        func resumes() -> Int { daemon.errorOutput.components(separatedBy: "the host resumed from suspend").count - 1 }
        #expect(try await holdsThroughout(.seconds(1)) { resumes() <= 1 }, "\(resumes()) resumes logged")
        #expect(server.requests == before, "no check for a spoofed resume")

        try await bus.prepareForSleep(false)
        _ = try await eventually("logind's own resume is heard", timeout: .seconds(3)) { server.requests > before ? true : nil }
        withExtendedLifetime((network, bus, server)) {}
    }

    /// Without a system bus (no socket, no address), nothing is tried and
    /// nothing is said.
    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/run/dbus/system_bus_socket"), "this host has a system bus"))
    func withoutASystemBusNothingIsTried() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon(["--check-url", "http://10.77.0.1:8080/generate_204"])
        defer { daemon.signal(SIGTERM) }
        #expect(try await holdsThroughout(.milliseconds(300)) { !daemon.errorOutput.contains("system bus") }, "\(daemon.errorOutput)")
    }
}
