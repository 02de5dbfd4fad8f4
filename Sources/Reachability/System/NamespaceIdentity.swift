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
    /// cookie of `socket` (one this thread made) where the kernel gives it;
    /// `nil` without /proc.
    package static func current(socket: Int32? = nil) -> NetworkNamespace? {
        var file = stat()
        // thread-self since Linux 3.17; before it, the process's.
        guard stat("/proc/thread-self/ns/net", &file) == 0 || stat("/proc/self/ns/net", &file) == 0 else { return nil }
        var cookie: UInt64 = 0
        var length = socklen_t(MemoryLayout<UInt64>.size)
        let known = socket.map { getsockopt($0, SOL_SOCKET, netnsCookieOption, &cookie, &length) == 0 } ?? false
        return NetworkNamespace(inode: UInt64(file.st_ino), device: UInt64(file.st_dev), cookie: known ? cookie : nil)
    }
}
