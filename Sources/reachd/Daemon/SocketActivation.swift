#if canImport(Glibc)
import Glibc
#endif

/// The listening sockets systemd passed (socket activation: $LISTEN_PID,
/// $LISTEN_FDS and $LISTEN_FDNAMES, descriptors from 3), if it passed any to
/// this process: reachd.socket's, and reachd-metrics.socket's, named
/// `metrics` (`FileDescriptorName=metrics`), when that unit is enabled.
struct SocketActivation: Equatable {
    static let firstDescriptor: Int32 = 3
    /// The name reachd-metrics.socket gives its descriptor.
    static let metricsName = "metrics"

    /// The daemon's Unix socket: the first descriptor not named ``metricsName``.
    var socket: Int32?
    /// The metrics listener, bound by systemd at boot.
    var metrics: Int32?

    /// What the variables say; they are removed, as sd_listen_fds(1) does:
    /// they are for this process, not its children.
    static func passedSockets(environment: [String: String] = environment(), pid: Int32 = getpid()) -> SocketActivation {
        var passed = SocketActivation()
        guard let listenPID = environment["LISTEN_PID"].flatMap({ Int32($0) }), listenPID == pid,
            let count = environment["LISTEN_FDS"].flatMap({ Int($0) }), count >= 1
        else { return passed }
        let names = environment["LISTEN_FDNAMES"].map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        for index in 0..<count {
            let fd = firstDescriptor + Int32(index)
            if index < names.count, names[index] == metricsName, passed.metrics == nil {
                passed.metrics = fd
            } else if passed.socket == nil {
                passed.socket = fd
            } else {
                // Nothing of reachd's: not held for nothing.
                close(fd)
            }
        }
        return passed
    }

    /// The path the passed Unix socket is bound to (reachd.socket's
    /// `ListenStream=`, whatever a drop-in made it), for the log; `nil`
    /// for an abstract or unnamed one.
    static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return path.isEmpty ? nil : path
    }

    /// The variables, from this process's environment, which they leave.
    static func environment() -> [String: String] {
        var result: [String: String] = [:]
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
            if let value = getenv(name) { result[name] = String(cString: value) }
            unsetenv(name)
        }
        return result
    }
}
