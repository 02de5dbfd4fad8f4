#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon's socket lives.
///
/// ```swift
/// let path = try SocketPath.forDaemon()          // where `reachd daemon` listens
/// let candidates = SocketPath.forClients()       // where clients look, in order
/// ```
public enum SocketPath {
    /// The system daemon's socket (the systemd units use it).
    public static let system = "/run/reachd/reachd.sock"
    /// Overrides every default, for the daemon and every client.
    public static let environmentVariable = "REACHD_SOCKET"

    /// The path `reachd daemon` binds when `--socket` is not given:
    /// `$REACHD_SOCKET`, else ``system`` for root, else `$XDG_RUNTIME_DIR/reachd.sock`.
    public static func forDaemon(
        environment: [String: String] = currentEnvironment(), isRoot: Bool = getuid() == 0
    ) throws(SocketPathError) -> String {
        if let explicit = environment[environmentVariable], !explicit.isEmpty { return explicit }
        if isRoot { return system }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else {
            throw SocketPathError()
        }
        return runtime + "/reachd.sock"
    }

    /// The paths a client tries when `--socket` is not given: the one a daemon of
    /// this user would bind, then the system daemon's, which any user may read.
    public static func forClients(
        environment: [String: String] = currentEnvironment(), isRoot: Bool = getuid() == 0
    ) -> [String] {
        if let explicit = environment[environmentVariable], !explicit.isEmpty { return [explicit] }
        let own = try? forDaemon(environment: environment, isRoot: isRoot)
        return [own, system].compactMap { $0 }.reduce(into: []) { paths, path in
            if !paths.contains(path) { paths.append(path) }
        }
    }

    /// The user a daemon connected to at `path` runs as (`peer`, from
    /// `SO_PEERCRED`), when a client should not trust it: at a default path
    /// (this user's own daemon's, the system's), a peer that is neither this
    /// user nor root, or one whose credentials cannot be read (`UInt32.max`).
    /// Anyone else who could put a socket there (a runtime directory set up
    /// wrong, a shared one) would answer for the network. A path the user
    /// named (`--socket`, ``environmentVariable``) is theirs to choose: `nil`.
    package static func untrustedPeer(
        at path: String, running peer: uid_t?, environment: [String: String] = currentEnvironment(),
        user: uid_t = getuid()
    ) -> uid_t? {
        guard environment[environmentVariable] != path else { return nil }
        var defaults = environment
        defaults[environmentVariable] = nil
        guard path == system || path == (try? forDaemon(environment: defaults, isRoot: user == 0)) else { return nil }
        guard let peer else { return .max }
        return peer == user || peer == 0 ? nil : peer
    }

    /// `path` alone when the caller named one, else ``forClients(environment:isRoot:)``.
    package static func forClients(orOnly path: String?) -> [String] {
        path.map { [$0] } ?? forClients()
    }

    /// The variables the defaults above read (``environmentVariable`` and
    /// `XDG_RUNTIME_DIR`), from this process's environment.
    public static func currentEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        for name in [environmentVariable, "XDG_RUNTIME_DIR"] {
            if let value = getenv(name) { result[name] = String(cString: value) }
        }
        return result
    }
}

/// No default socket path: not root and `XDG_RUNTIME_DIR` is not set.
public struct SocketPathError: Error, Sendable, CustomStringConvertible {
    public var description: String {
        "no socket path: not root and XDG_RUNTIME_DIR is not set; pass --socket PATH or set REACHD_SOCKET"
    }
}
