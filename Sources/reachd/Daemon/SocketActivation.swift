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
