#if canImport(Glibc)
import Glibc
#endif

/// The few Unix-domain socket calls reachd makes, each wrapped once so that
/// `errno` becomes a ``SystemError`` in one place.
package enum UnixSocket {
    /// Connects a stream socket to `path`, waiting at most `timeout` when the
    /// listener's queue is full. Throws with `errno` ENOENT or ECONNREFUSED when
    /// nothing listens there, EAGAIN when the queue stayed full. The timeout
    /// stays set for sending, so the request written next is bounded too.
    ///
    /// A non-blocking connect cannot be waited for on a Unix socket: with the
    /// queue full it fails at once with EAGAIN instead of EINPROGRESS. A blocking
    /// connect waits for room, bounded by the socket's send timeout (the kernel's
    /// `unix_stream_connect` uses `SO_SNDTIMEO`), so that is the deadline.
    package static func connect(to path: String, timeout: Duration? = nil) throws(SystemError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        if let timeout { setTimeout(fd, SO_SNDTIMEO, timeout) }
        let result = try withAddress(path) { Glibc.connect(fd, $0, $1) }
        guard result == 0 else {
            let error = SystemError("connect to \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Sets `SO_SNDTIMEO` or `SO_RCVTIMEO`; `nil` waits for ever.
    package static func setTimeout(_ fd: Int32, _ option: Int32, _ timeout: Duration?) {
        var value = timeval(tv_sec: 0, tv_usec: 0)
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            // At least a microsecond, even for a deadline already passed: zero means "for ever".
            let microseconds = max(seconds * 1_000_000 + attoseconds / 1_000_000_000_000, 1)
            value = timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
        }
        setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The user at the other end of a connected Unix socket (`SO_PEERCRED`).
    package static func peerUser(_ fd: Int32) -> uid_t? {
        peerCredentials(fd)?.uid
    }

    /// The process at the other end of `fd` (`SO_PEERCRED`): the one that
    /// connected, or, from a client's side, the one that listened.
    package static func peerProcess(_ fd: Int32) -> pid_t? {
        peerCredentials(fd)?.pid
    }

    private static func peerCredentials(_ fd: Int32) -> (pid: pid_t, uid: uid_t, gid: gid_t)? {
        // `struct ucred` is hidden behind _GNU_SOURCE, which Swift's Glibc module
        // does not define; its layout is the kernel ABI: pid, uid, gid.
        var credentials: (pid: pid_t, uid: uid_t, gid: gid_t) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
            length == MemoryLayout.size(ofValue: credentials)
        else { return nil }
        return credentials
    }

    /// Creates a socket bound to `path` and listening, its file created with
    /// `mode`; the caller handles a path that is already taken (EADDRINUSE).
    ///
    /// The mode is set on the socket before `bind` creates the file, with the
    /// umask lifted for that one call: a `chmod(path)` afterwards would follow
    /// whatever a user with write access to the directory put there meanwhile.
    /// The backlog is the kernel's maximum (`SOMAXCONN`), as systemd's socket
    /// units use: a burst of connections waits for the daemon's next wake-up
    /// rather than failing at once with EAGAIN.
    package static func listen(at path: String, mode: mode_t = 0o600, backlog: Int32 = SOMAXCONN) throws(SystemError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw SystemError("socket") }
        guard fchmod(fd, mode) == 0 else {
            let error = SystemError("set the mode of the socket for \(path)")
            close(fd)
            throw error
        }
        let umaskBefore = umask(0)
        let bound = try withAddress(path, { bind(fd, $0, $1) })
        let bindErrno = errno
        umask(umaskBefore)
        guard bound == 0 else {
            close(fd)
            throw SystemError("bind \(path)", errno: bindErrno)
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = SystemError("listen on \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Accepts one connection from a non-blocking listener, itself non-blocking
    /// and close-on-exec; `-1` with `errno` set when none is waiting or it failed.
    /// (`accept4` would do both at once, but it hides behind _GNU_SOURCE, which
    /// Swift's Glibc module does not define; the daemon never execs, so the two
    /// `fcntl` calls leave no window that matters.)
    package static func accept(from listener: Int32) -> Int32 {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { return fd }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
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

    /// A non-blocking datagram socket connected to `name` (a path, or
    /// "@abstract"): its sends fail with EAGAIN when the receiver's queue is
    /// full, and it polls writable once there is room again.
    package static func connectDatagram(to name: String) throws(SystemError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        guard try withAddress(name, { Glibc.connect(fd, $0, $1) }) == 0 else {
            let error = SystemError("connect to \(name)")
            close(fd)
            throw error
        }
        return fd
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
