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

    /// Sends one datagram to the AF_UNIX datagram socket `name` (a path, or
    /// "@abstract"). Best effort: returns whether it was sent.
    @discardableResult
    package static func sendDatagram(_ bytes: [UInt8], to name: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let sent = try? withAddress(name) { address, length in
            bytes.withUnsafeBytes { Int32(sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length)) }
        }
        return (sent ?? -1) == bytes.count
    }

    /// A datagram socket bound to `name` (a path, or "@abstract").
    package static func bindDatagram(at name: String) throws(SystemError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        guard try withAddress(name, { bind(fd, $0, $1) }) == 0 else {
            let error = SystemError("bind \(name)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Builds the `sockaddr_un` for `name` once for every caller. A leading "@"
    /// names an abstract socket (systemd's notation): its address starts with a
    /// NUL byte, is not NUL-terminated, and its length counts only its bytes.
    private static func withAddress(
        _ name: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) throws(SystemError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        var bytes = Array(name.utf8)
        guard bytes.count > (bytes.first == UInt8(ascii: "@") ? 1 : 0), bytes.count < capacity else {
            throw SystemError("socket path \"\(name)\" (must be 1 to \(capacity - 1) bytes)", errno: ENAMETOOLONG)
        }
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = abstract
            ? socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
            : socklen_t(MemoryLayout<sockaddr_un>.size)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
