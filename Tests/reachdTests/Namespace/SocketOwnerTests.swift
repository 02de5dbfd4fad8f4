import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A client finds its daemon at default paths: its own runtime
/// directory's `reachd.sock`, then the system's. Whoever can put a socket
/// there answers for the network, so a client trusts one only of its own
/// user's or root's; a path the user names is theirs to choose. The same
/// for `reachd` and for the GIO module in every GLib app.
@Suite("Whose socket a client trusts", .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct SocketOwnerTests {
    static let owner = 4242
    static let stranger = 4343

    /// A daemon whose socket, `reachd.sock` in a runtime directory of its
    /// own, belongs to ``owner``.
    static func plantedDaemon() throws -> (FakeDaemon, runtime: String) {
        let daemon = try FakeDaemon(answering: FakeDaemon.newerDaemonsLine)
        #expect(lchown(daemon.path, uid_t(owner), gid_t(owner)) == 0)
        return (daemon, URL(fileURLWithPath: daemon.path).deletingLastPathComponent().path)
    }

    /// The environment of a user whose runtime directory is `runtime`, with
    /// no socket named.
    static func environment(_ runtime: String) -> [String] {
        ["/usr/bin/env", "-u", "REACHD_SOCKET", "XDG_RUNTIME_DIR=\(runtime)"]
    }

    @Test func reachdAsksOnlyASocketOfItsUserOrRoot() async throws {
        let (daemon, runtime) = try Self.plantedDaemon()
        let stranger = try await Subprocess.run(
            Self.environment(runtime) + TestNetwork.asUser(Self.stranger) + [Reachd.binary, "status", "--json"])
        #expect(!stranger.output.contains(#""source":"daemon""#), "\(stranger.output)")
        #expect(stranger.error.contains("\(runtime)/reachd.sock belongs to user \(Self.owner), neither you nor root"),
                "says why: \(stranger.error)")
        #expect(daemon.connections == 0, "not even connected to")
        let owner = try await Subprocess.run(
            Self.environment(runtime) + TestNetwork.asUser(Self.owner) + [Reachd.binary, "status", "--json"])
        #expect(owner.output.contains(#""source":"daemon""#), "its own daemon: \(owner.output)\(owner.error)")
        // Named, it is the user's choice.
        let named = try await Subprocess.run(
            ["/usr/bin/env", "REACHD_SOCKET=\(daemon.path)"] + TestNetwork.asUser(Self.stranger) + [Reachd.binary, "status", "--json"])
        #expect(named.output.contains(#""source":"daemon""#), "\(named.output)\(named.error)")
    }

    @Test(.enabled(if: GLibApp.available, GLibApp.reason))
    func theGIOModuleAsksOnlyASocketOfItsUserOrRoot() async throws {
        let (daemon, runtime) = try Self.plantedDaemon()
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
        #expect(stranger.contains("belongs to user \(Self.owner), neither this one nor root"), "says why: \(stranger)")
        #expect(daemon.connections == 0)
        let owner = try await backend(as: Self.owner)
        #expect(owner.hasSuffix("ReachdNetworkMonitor\n"), "\(owner)")
    }
}
