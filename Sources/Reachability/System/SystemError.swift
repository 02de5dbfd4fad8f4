#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: what was being done and the `errno` it failed with.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done: "connect to /run/reachd/reachd.sock".
    public let operation: String
    /// The `errno` it failed with.
    public let errno: Int32

    package init(_ operation: String, errno: Int32 = Glibc.errno) {
        self.operation = operation
        self.errno = errno
    }

    /// No such file (ENOENT): at a socket's path, nothing at all, which a
    /// watch of its directory can tell the end of.
    package var isNoSuchFile: Bool { errno == ENOENT }

    public var description: String {
        "\(operation): \(String(cString: strerror(errno)))"
    }
}
