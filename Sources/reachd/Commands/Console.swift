#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered writes to stdout and stderr. C's `stdout` and `stderr` are global
/// mutable state that Swift 6 rightly refuses to share between tasks; a `write`
/// per line also means `monitor` output reaches a pipe at once.
enum Console {
    static func out(_ text: String) {
        write(to: 1, text)
    }

    /// A line as bytes (a daemon's, as received), with its newline.
    static func out(_ line: [UInt8]) {
        var bytes = line
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        write(to: 1, bytes)
    }

    static func error(_ text: String) {
        write(to: 2, text)
    }

    private static func write(to fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        write(to: fd, bytes)
    }

    private static func write(to fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            offset += count
        }
    }
}
