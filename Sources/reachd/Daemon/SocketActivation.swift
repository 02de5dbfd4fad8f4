#if canImport(Glibc)
import Glibc
#endif

/// The listening socket systemd passed (socket activation: $LISTEN_PID and
/// $LISTEN_FDS, descriptors from 3), if it passed one to this process.
enum SocketActivation {
    static let firstDescriptor: Int32 = 3

    static func passedSocket() -> Int32? {
        guard let pid = getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }), pid == getpid(),
            let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), count >= 1
        else { return nil }
        // As sd_listen_fds(1) does: the variables are for this process, not its children.
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        return firstDescriptor
    }
}
