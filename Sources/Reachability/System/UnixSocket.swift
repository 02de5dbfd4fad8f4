#if canImport(Glibc)
import Glibc
#endif

/// The few Unix-domain socket calls reachd makes, each wrapped once so that
/// `errno` becomes a ``SystemError`` in one place.
package enum UnixSocket {
    /// Connects a stream socket to `path`. Throws with `errno` ENOENT or
    /// ECONNREFUSED when nothing listens there.
    package static func connect(to path: String) throws(SystemError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        let result = try withAddress(path) { Glibc.connect(fd, $0, $1) }
        guard result == 0 else {
            let error = SystemError("connect to \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Creates a socket bound to `path` and listening; the caller handles a path
    /// that is already taken (EADDRINUSE).
    package static func listen(at path: String, backlog: Int32 = 64) throws(SystemError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw SystemError("socket") }
        guard try withAddress(path, { bind(fd, $0, $1) }) == 0 else {
            let error = SystemError("bind \(path)")
            close(fd)
            throw error
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = SystemError("listen on \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Writes all of `bytes` to a blocking descriptor.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemError("write")
            }
            offset += written
        }
    }

    private static func withAddress(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) throws(SystemError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let utf8 = Array(path.utf8)
        guard !utf8.isEmpty, utf8.count < capacity else {
            throw SystemError("socket path \"\(path)\" (must be 1 to \(capacity - 1) bytes)", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: utf8)
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}
