import Foundation
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// Whether this machine lets the tests make network namespaces (root and
/// iproute2). Elsewhere the namespace suites are skipped with that reason.
enum NamespaceSupport {
    static let available: Bool = {
        guard !TestScope.unitOnly, getuid() == 0 else { return false }
        let probe = "rd-probe-\(getpid())"
        let made = Subprocess.runBlocking(["/usr/bin/env", "ip", "netns", "add", probe]) == 0
        if made { _ = Subprocess.runBlocking(["/usr/bin/env", "ip", "netns", "del", probe]) }
        return made
    }()

    static let reason: Comment = TestScope.unitOnly
        ? "\(TestScope.unitOnlyReason)"
        : "needs root and `ip netns` (network namespaces): run the tests as root"
}

/// A host namespace, optionally wired by a veth pair (`vh` inside, `vg` on the
/// far side) to a gateway namespace; both are deleted when the value goes away.
/// Addressing: 10.77.0.2/24 and fd77::2/64 on the host, .1 and ::1 on the gateway.
final class TestNetwork: @unchecked Sendable {
    let host: String
    let gateway: String
    let directory: URL
    /// Where ``copyOfEtc()`` copies to; removed with the network.
    private let etcCopy: URL
    var socketPath: String { directory.appendingPathComponent("reachd.sock").path }

    init(wired: Bool = true) async throws {
        let id = String(UUID().uuidString.prefix(8)).lowercased()
        host = "rd-\(id)-h"
        gateway = "rd-\(id)-g"
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("rd-\(id)")
        etcCopy = ScratchSpace.directory.appendingPathComponent("rd-\(id)-etc")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        // No duplicate address detection: an address that turns usable a second
        // later is a real change, and would land in the middle of some test.
        try await Self.sh("""
            ip netns add \(host) && ip -n \(host) link set lo up && \
            ip netns exec \(host) sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
            """)
        if wired {
            try await Self.sh("""
                ip netns add \(gateway) && ip -n \(gateway) link set lo up && \
                ip link add vh netns \(host) type veth peer name vg netns \(gateway) && \
                ip -n \(gateway) link set vg up && \
                ip -n \(gateway) addr add 10.77.0.1/24 dev vg && \
                ip -n \(gateway) -6 addr add fd77::1/64 dev vg nodad
                """)
        }
    }

    deinit {
        _ = Subprocess.runBlocking(["/usr/bin/env", "ip", "netns", "del", host])
        _ = Subprocess.runBlocking(["/usr/bin/env", "ip", "netns", "del", gateway])
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.removeItem(at: etcCopy)
    }

    /// `ip -n HOST ...` for each command, stopping at the first failure.
    func inHost(_ commands: String...) async throws {
        try await Self.sh(commands.map { "ip -n \(host) \($0)" }.joined(separator: " && "))
    }

    /// Runs `body` on a thread of its own that has joined the host
    /// namespace, as a program started there would run: what it makes (a
    /// `ReachabilityMonitor`, whose thread it starts) lives in that network,
    /// beside the daemon ``startDaemon(_:descriptorLimit:etc:)`` started.
    func onThreadInHost<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let path = "/var/run/netns/\(host)"
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            startDetachedThread {
                continuation.resume(returning: Result {
                    try Self.joinNetworkNamespace(path)
                    return try body()
                })
            }
        }
        return try result.get()
    }

    /// `setns(2)` into the namespace at `path`, for the calling thread only.
    /// Through `dlsym`: Swift's Glibc module leaves it out (it needs _GNU_SOURCE), and
    /// CLONE_NEWNET (0x40000000) with it.
    private static func joinNetworkNamespace(_ path: String) throws {
        typealias SetNamespace = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "setns") else {  // RTLD_DEFAULT
            throw HarnessError.commandFailed("no setns in the C library")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HarnessError.commandFailed("open \(path)") }
        defer { close(fd) }
        guard unsafeBitCast(symbol, to: SetNamespace.self)(fd, 0x4000_0000) == 0 else {
            throw HarnessError.commandFailed("setns \(path): errno \(errno)")
        }
    }

    func inGateway(_ commands: String...) async throws {
        try await Self.sh(commands.map { "ip -n \(gateway) \($0)" }.joined(separator: " && "))
    }

    /// `text` as the file `name` in the test's directory, mode 0644 whatever
    /// the umask: radvd refuses a configuration others may write, and CI may
    /// run under a umask of 0.
    func file(_ name: String, containing text: String) throws -> URL {
        let file = directory.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        return file
    }

    /// The folder `name` in the test's directory, mode 0755 whatever the
    /// umask: the daemon refuses to write its textfile where others may.
    func folder(_ name: String) throws -> URL {
        let folder = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        return folder
    }

    /// Feeds many `ip` commands to one `ip -batch` in the host namespace.
    /// A flood's time is the kernel's and the machine's: 200,000 route
    /// changes take about 3 s alone and over 20 s beside the booted-systemd
    /// tests on two cores, so it has a minute.
    func batchInHost(_ commands: [String]) async throws {
        let file = directory.appendingPathComponent("batch-\(UUID().uuidString)")
        try commands.joined(separator: "\n").appending("\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await Self.sh("ip -n \(host) -batch \(file.path)", timeout: .seconds(60))
    }

    /// The veth up with an IPv4 address on the host side; optionally the default route.
    func bringUpIPv4(defaultRoute: Bool) async throws {
        try await inHost("link set vh up", "addr add 10.77.0.2/24 dev vh")
        if defaultRoute { try await inHost("route add default via 10.77.0.1") }
    }

    /// Runs `reachd ARGS` inside the host namespace.
    func reachd(_ arguments: String..., timeout: Duration = .seconds(20)) async throws
        -> (status: Int32, output: String, error: String)
    {
        try await Subprocess.run(["/usr/bin/env", "ip", "netns", "exec", host, Reachd.binary] + arguments,
                                 timeout: timeout)
    }

    /// Runs `reachd ARGS` inside the host namespace as `user` (and its group),
    /// with no supplementary groups: another local user, as the daemon sees it.
    func reachd(asUser user: Int, _ arguments: String..., timeout: Duration = .seconds(20)) async throws
        -> (status: Int32, output: String, error: String)
    {
        try await Subprocess.run(
            ["/usr/bin/env", "ip", "netns", "exec", host] + Self.asUser(user) + [Reachd.binary] + arguments,
            timeout: timeout)
    }

    /// `setpriv` arguments that run what follows as `user`.
    static func asUser(_ user: Int) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--clear-groups"]
    }

    /// The command prefix that runs a program in the host namespace; with
    /// `etc`, in a mount namespace of its own where that directory is /etc.
    /// `ip netns exec` mounts files from /etc/netns over /etc, and a file
    /// mounted over can be neither replaced, as editors and resolvconf
    /// replace /etc/hosts and /etc/resolv.conf, nor watched through /etc.
    /// With `runSystemd`, that directory is /run/systemd too: where
    /// systemd-resolved writes the servers it asks (`resolve/resolv.conf`).
    func inHost(etc: URL?, runSystemd: URL? = nil) -> [String] {
        let namespace = ["/usr/bin/env", "ip", "netns", "exec", host]
        guard etc != nil || runSystemd != nil else { return namespace }
        var mounts: [String] = []
        if let etc { mounts.append(#"mount --bind "\#(etc.path)" /etc"#) }
        if let runSystemd { mounts.append(#"mount --bind "\#(runSystemd.path)" /run/systemd"#) }
        return namespace + [
            "unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
            mounts.joined(separator: " && ") + #" && exec "$@""#, "sh",
        ]
    }

    /// Connections made to `socket` and not yet closed by the daemon in the
    /// host namespace, from clients in the host namespace, or with
    /// `fromTheTest`, in the test's own: the kernel makes an accepted socket
    /// in its client's namespace, not the listener's, and lists it there.
    /// A connection still in the listen queue counts.
    func connections(to socket: String, fromTheTest: Bool = false) async throws -> Int {
        let namespace = fromTheTest ? [] : ["ip", "netns", "exec", host]
        let listing = try await Subprocess.run(["/usr/bin/env"] + namespace + ["ss", "-xHn", "state", "connected"])
        return listing.output.split(separator: "\n").filter { $0.contains(" \(socket) ") }.count
    }

    /// A copy of the host's /etc for ``inHost(etc:)``, in ``ScratchSpace``.
    func copyOfEtc() async throws -> URL {
        try await Self.sh("cp -a /etc \(etcCopy.path)")
        return etcCopy
    }

    func startReachd(_ arguments: String...) throws -> Subprocess {
        try Subprocess(["/usr/bin/env", "ip", "netns", "exec", host, Reachd.binary] + arguments)
    }

    /// Runs `reachd ARGS` inside the host namespace with `REACHD_SOCKET=socket`:
    /// the default daemon, so where it doesn't answer the client goes on in-process
    /// (`--socket` would make that an error).
    func reachd(defaultSocket socket: String, _ arguments: String..., timeout: Duration = .seconds(20)) async throws
        -> (status: Int32, output: String, error: String)
    {
        try await Subprocess.run(
            ["/usr/bin/env", "\(SocketPath.environmentVariable)=\(socket)", "ip", "netns", "exec", host, Reachd.binary]
                + arguments,
            timeout: timeout)
    }

    func startReachd(defaultSocket socket: String, _ arguments: String...) throws -> Subprocess {
        try startReachd(defaultSocket: socket, arguments)
    }

    func startReachd(defaultSocket socket: String, _ arguments: [String]) throws -> Subprocess {
        try Subprocess(
            ["/usr/bin/env", "\(SocketPath.environmentVariable)=\(socket)", "ip", "netns", "exec", host, Reachd.binary]
                + arguments)
    }

    /// `reachd status --json` decoded; `inProcess` asks for the in-process answer.
    func status(inProcess: Bool = false) async throws -> (status: NetworkStatus, exitCode: Int32) {
        let result = try await reachd("status", "--json", inProcess ? "--no-daemon" : "--socket=\(socketPath)")
        let line = result.output.split(separator: "\n").first.map { Array($0.utf8) } ?? []
        guard case .status(let status) = try DaemonMessage.decode(line) else {
            throw HarnessError.commandFailed("status printed \(result.output) \(result.error)")
        }
        return (status, result.status)
    }

    /// Polls `reachd status` until `condition` holds, and returns that status.
    @discardableResult
    func waitForStatus(
        inProcess: Bool = false, timeout: Duration = .seconds(10), _ what: String,
        _ condition: @escaping (NetworkStatus) -> Bool
    ) async throws -> NetworkStatus {
        try await eventually(what, timeout: timeout) {
            let (status, _) = try await self.status(inProcess: inProcess)
            return condition(status) ? status : nil
        }
    }

    /// Starts `reachd daemon` on this network's socket, with `arguments` and at
    /// most `descriptorLimit` open files, and waits until it answers.
    func startDaemon(_ arguments: String..., descriptorLimit: Int? = nil, etc: URL? = nil) async throws -> Subprocess {
        try await startDaemon(arguments, descriptorLimit: descriptorLimit, etc: etc)
    }

    /// - Parameters:
    ///   - etc: mounted on /etc for the daemon alone (see ``inHost(etc:)``).
    ///   - environment: set for the daemon, beside the test's own.
    ///   - runSystemd: mounted on /run/systemd for the daemon alone.
    func startDaemon(
        _ arguments: [String], descriptorLimit: Int? = nil, etc: URL? = nil, runSystemd: URL? = nil,
        environment: [String: String] = [:]
    ) async throws -> Subprocess {
        let limit = descriptorLimit.map { ["/usr/bin/prlimit", "--nofile=\($0):\($0)"] } ?? []
        let variables = environment.isEmpty ? [] : ["/usr/bin/env"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let daemon = try Subprocess(
            variables + limit + inHost(etc: etc, runSystemd: runSystemd)
                + [Reachd.binary, "daemon", "--socket", socketPath, "--log-level", "debug"] + arguments)
        // make test starts every suite at once: a daemon's start has taken
        // over 10 s in that first storm. One that fails exits, and is said.
        _ = try await eventually("the daemon answers on \(socketPath)", timeout: .seconds(30)) { () -> Bool? in
            guard daemon.isRunning else {
                throw HarnessError.commandFailed("daemon exited: \(daemon.errorOutput)")
            }
            return (try? daemonStatus(at: self.socketPath)) != nil ? true : nil
        }
        return daemon
    }

    /// Runs a shell command, awaiting rather than blocking one of the few
    /// threads Swift's concurrency runtime has.
    static func sh(_ command: String, timeout: Duration = .seconds(20)) async throws {
        let result = try await Subprocess.run(["/bin/sh", "-c", command], timeout: timeout)
        guard result.status == 0 else {
            throw HarnessError.commandFailed("\(command): \(result.error)")
        }
    }
}

/// The `reachd` binary built beside this test bundle.
enum Reachd {
    static let binary: String = {
        if let explicit = ProcessInfo.processInfo.environment["REACHD_BINARY"] { return explicit }
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ].map { $0.appendingPathComponent("reachd").path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }()
}
