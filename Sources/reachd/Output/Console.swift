#if canImport(Glibc)
import Glibc
#endif
import Reachability

/// Unbuffered writes to stdout and stderr. C's `stdout` and `stderr` are global
/// mutable state that Swift 6 rightly refuses to share between tasks; a `write`
/// per line also means `monitor` output reaches a pipe at once.
///
/// Text for a person passes ``Swift/StringProtocol/escapingControlCharacters``
/// line by line: whatever it quotes (a portal's URL, an interface name, a
/// daemon's error message) can't steer the terminal. JSON goes out exactly as
/// given: it escapes what it must itself, and scripts read its bytes.
enum Console {
    /// Text for a person on stdout.
    static func out(_ text: String) {
        write(to: 1, escapingEachLine(text))
    }

    /// Text for a person on stderr.
    static func error(_ text: String) {
        write(to: 2, escapingEachLine(text))
    }

    /// A JSON line on stdout, as it is (a daemon's bytes, as received).
    static func json(_ line: [UInt8]) {
        var bytes = line
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        write(to: 1, bytes)
    }

    /// A JSON line on stdout, as it is.
    static func json(_ line: String) {
        json(Array(line.utf8))
    }

    /// Our own line breaks stay line breaks; every other control is escaped.
    private static func escapingEachLine(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        // Nothing to escape but our own line breaks, as nearly always: as it is.
        if !bytes.withUnsafeBufferPointer({ ControlCharacters.absent(from: $0, newlines: true) }) {
            bytes = Array(text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.escapingControlCharacters }.joined(separator: "\n").utf8)
        }
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        return bytes
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
