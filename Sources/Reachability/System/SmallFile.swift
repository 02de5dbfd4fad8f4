#if canImport(Glibc)
import Glibc
#endif

/// Reads configuration and sysfs files: small, read whole, at most `limit`
/// bytes (what is past it is left out, never a reason to fail). Read on the
/// daemon's event path (the resolver's files changed), so nothing here may
/// wait: only a regular file is read, and a FIFO put in its place is not
/// waited on.
enum SmallFile {
    /// The file's text, `nil` when it can't be opened, is no regular file, or is empty.
    static func read(_ path: String, limit: Int = 64 * 1024) -> String? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = Glibc.read(fd, &buffer, min(buffer.count, limit - bytes.count))
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}
