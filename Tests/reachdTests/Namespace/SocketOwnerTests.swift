import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A client finds its daemon at default paths: its own runtime
/// directory's `reachd.sock`, then the system's. Whoever can put a socket
/// there answers for the network, so a client trusts only a daemon that
/// runs as its own user or root, judged on the connected socket
/// (`SO_PEERCRED`) before it sends anything: a look at the file's owner
/// first could be raced. A path the user names is theirs to choose. The
/// same for `reachd` and for the GIO module in every GLib app.
@Suite("Whose daemon a client trusts", .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct SocketOwnerTests {
    static let owner = 4242
    static let stranger = 4343
    static let impostor = packageRoot.appendingPathComponent("Tests/reachdTests/Harness/impostor-daemon.py").path

    /// A daemon running as ``owner``, listening at `reachd.sock` in a
    /// runtime directory of that user's, its socket file made ``stranger``'s.
    static func plantedDaemon() async throws -> (Subprocess, runtime: String) {
        let runtime = "/tmp/rd-owner-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        #expect(chown(runtime, uid_t(owner), gid_t(owner)) == 0)
        let daemon = try Subprocess(
            TestNetwork.asUser(owner) + ["/usr/bin/python3", impostor, "\(runtime)/reachd.sock", FakeDaemon.newerDaemonsLine])
        _ = try await eventually("the planted daemon listens") { () -> Bool? in
            guard daemon.isRunning else { throw HarnessError.commandFailed("the planted daemon exited: \(daemon.errorOutput)") }
            return daemon.outputLines.first == "listening" ? true : nil
        }
        // The file says the stranger's, as a path swapped between a look at
        // it and the connect would: only who answers counts.
        #expect(lchown("\(runtime)/reachd.sock", uid_t(stranger), gid_t(stranger)) == 0)
        return (daemon, runtime)
    }

    /// What the planted daemon was sent on each connection.
    static func sent(_ daemon: Subprocess) -> [String] { Array(daemon.outputLines.dropFirst()) }

    /// The environment of a user whose runtime directory is `runtime`, with
    /// no socket named.
    static func environment(_ runtime: String) -> [String] {
        ["/usr/bin/env", "-u", "REACHD_SOCKET", "XDG_RUNTIME_DIR=\(runtime)"]
    }

    @Test func reachdAsksOnlyADaemonOfItsUserOrRoot() async throws {
        let (daemon, runtime) = try await Self.plantedDaemon()
        defer {
            daemon.signal(SIGKILL)
            try? FileManager.default.removeItem(atPath: runtime)
        }
        let stranger = try await Subprocess.run(
            Self.environment(runtime) + TestNetwork.asUser(Self.stranger) + [Reachd.binary, "status", "--json"])
        #expect(!stranger.output.contains(#""source":"daemon""#), "\(stranger.output)")
        #expect(stranger.error.contains("the daemon on \(runtime)/reachd.sock runs as user \(Self.owner), neither you nor root"),
                "says why: \(stranger.error)")
        let sent = try await eventually("the planted daemon saw the connection") { Self.sent(daemon).isEmpty ? nil : Self.sent(daemon) }
        #expect(sent.allSatisfy { $0 == "connection sent 0 bytes" }, "asked nothing: \(sent)")
        let owner = try await Subprocess.run(
            Self.environment(runtime) + TestNetwork.asUser(Self.owner) + [Reachd.binary, "status", "--json"])
        #expect(owner.output.contains(#""source":"daemon""#), "its own daemon: \(owner.output)\(owner.error)")
        // Named, it is the user's choice.
        let named = try await Subprocess.run(
            ["/usr/bin/env", "REACHD_SOCKET=\(runtime)/reachd.sock"] + TestNetwork.asUser(Self.stranger)
                + [Reachd.binary, "status", "--json"])
        #expect(named.output.contains(#""source":"daemon""#), "\(named.output)\(named.error)")
    }

    @Test(.enabled(if: GLibApp.available, GLibApp.reason))
    func theGIOModuleAsksOnlyADaemonOfItsUserOrRoot() async throws {
        let (daemon, runtime) = try await Self.plantedDaemon()
        defer {
            daemon.signal(SIGKILL)
            try? FileManager.default.removeItem(atPath: runtime)
        }
        func backend(as user: Int) async throws -> String {
            let result = try await Subprocess.run(
                Self.environment(runtime) + ["GIO_EXTRA_MODULES=\(GLibApp.moduleDirectory.path)", "GIO_USE_NETWORK_MONITOR=reachd",
                                             "G_MESSAGES_DEBUG=GLib-GIO"] + TestNetwork.asUser(user) + [
                    "/usr/bin/python3", "-c", "from gi.repository import Gio; print(Gio.NetworkMonitor.get_default().__gtype__.name)",
                ])
            return result.output
        }
        let stranger = try await backend(as: Self.stranger)
        #expect(stranger.hasSuffix("GNetworkMonitorNetlink\n"), "\(stranger)")
        #expect(stranger.contains("the daemon on \(runtime)/reachd.sock runs as user \(Self.owner), neither this one nor root"),
                "says why: \(stranger)")
        let sent = try await eventually("the planted daemon saw the connection") { Self.sent(daemon).isEmpty ? nil : Self.sent(daemon) }
        #expect(sent.allSatisfy { $0 == "connection sent 0 bytes" }, "asked nothing: \(sent)")
        let owner = try await backend(as: Self.owner)
        #expect(owner.hasSuffix("ReachdNetworkMonitor\n"), "\(owner)")
    }
}
