#if canImport(Glibc)
import Glibc
#endif

extension NetworkNamespace {
    /// `SO_NETNS_COOKIE` in <asm-generic/socket.h>, which Swift's Glibc module
    /// does not define (alpha, mips, parisc and sparc, which reachd does not
    /// build for, number it otherwise).
    private static let netnsCookieOption: Int32 = 71

    /// The calling thread's network namespace (a thread may have joined
    /// another with `setns`, and the sockets it makes are there), with the
    /// cookie of `socket` (one this thread made) where the kernel gives it.
    /// Without /proc, the cookie alone (inode and device 0), which clients
    /// compare first; `nil` with neither, which no client takes for its own.
    package static func current(socket: Int32? = nil) -> NetworkNamespace? {
        var file = stat()
        let cookie = socket.flatMap(cookie(of:))
        // thread-self since Linux 3.17; before it, the process's.
        guard stat("/proc/thread-self/ns/net", &file) == 0 || stat("/proc/self/ns/net", &file) == 0 else {
            return cookie.map { NetworkNamespace(inode: 0, device: 0, cookie: $0) }
        }
        return NetworkNamespace(inode: UInt64(file.st_ino), device: UInt64(file.st_dev), cookie: cookie)
    }

    /// Whether `self` (a daemon's) is `ours`, the client's own as
    /// ``current(socket:)`` made it: the cookies decide where both have one
    /// (never reused, and readable without /proc); else the inode and device
    /// of the thread's namespace file. With neither to compare (no cookie,
    /// and no /proc: `nil`, or inode 0), `true`: nothing here can say
    /// otherwise. A daemon that names no namespace at all is the caller's
    /// to refuse. Pure: the session's reducer decides with it.
    package func isSameNetwork(as ours: NetworkNamespace?) -> Bool {
        if let theirs = cookie, let mine = ours?.cookie { return theirs == mine }
        guard let ours, ours.inode != 0 else { return true }
        return inode == ours.inode && device == ours.device
    }

    /// Whether the process at the other end of `connection`, a Unix
    /// connection this namespace's listener accepted, is of this namespace:
    /// told by the accepted socket's cookie where both have one (the kernel
    /// makes that socket in the connecting socket's namespace), else by the
    /// peer's `/proc/PID/ns/net` (`SO_PEERCRED`'s pid) where it can be read
    /// (root can; `ProtectProc=invisible` hides other users' processes);
    /// `nil` where neither tells.
    package func hasPeer(on connection: Int32) -> Bool? {
        if let ours = cookie, let theirs = Self.cookie(of: connection) { return ours == theirs }
        guard let pid = UnixSocket.peerProcess(connection), pid > 0, inode != 0 else { return nil }
        var file = stat()
        guard stat("/proc/\(pid)/ns/net", &file) == 0 else { return nil }
        return UInt64(file.st_ino) == inode && UInt64(file.st_dev) == device
    }

    /// The cookie of the namespace `socket` lives in. On a connection a
    /// Unix socket listener accepted, that is the connecting process's: the
    /// kernel makes the accepted socket in the namespace of the socket that
    /// connected, which is how a daemon tells a peer's network without
    /// reading its `/proc` (which `ProtectProc=invisible` hides).
    package static func cookie(of socket: Int32) -> UInt64? {
        var cookie: UInt64 = 0
        var length = socklen_t(MemoryLayout<UInt64>.size)
        return getsockopt(socket, SOL_SOCKET, netnsCookieOption, &cookie, &length) == 0 ? cookie : nil
    }
}
