#if canImport(Glibc)
import Glibc
#endif

/// Splits a byte stream into newline-terminated lines, refusing any line longer
/// than `limit` bytes before it is complete, so a peer cannot make it grow.
package struct LineBuffer {
    package let limit: Int
    private var pending: [UInt8] = []

    package init(limit: Int) {
        self.limit = limit
    }

    package enum Failure: Error, Equatable {
        case lineTooLong(limit: Int)
    }

    /// Appends received bytes and returns the lines they complete (newlines
    /// stripped, and a `\r` before them too).
    package mutating func append(_ bytes: some Collection<UInt8>) throws(Failure) -> [[UInt8]] {
        if let lines = bytes.withContiguousStorageIfAvailable({ (buffer) -> Result<[[UInt8]], Failure> in split(buffer) }) {
            return try lines.get()
        }
        return try Array(bytes).withUnsafeBufferPointer { (buffer) -> Result<[[UInt8]], Failure> in split(buffer) }.get()
    }

    /// A segment at a time between newlines, copied whole: byte by byte,
    /// each `append` checked the buffer's capacity and uniqueness, and a
    /// following client spent 60k instructions on each 1.5 KB status line
    /// it read, as many as the in-process engine spends evaluating one
    /// (callgrind, issue 45).
    private mutating func split(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<[[UInt8]], Failure> {
        var lines: [[UInt8]] = []
        var start = 0
        // memchr: the standard library's firstIndex(of:) on a slice cost 6
        // instructions a byte, libc's a fraction of one.
        while let base = bytes.baseAddress, start < bytes.count,
            let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start)
        {
            let newline = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            // The line so far, its `\r` included, is held to the limit.
            guard pending.count + (newline - start) <= limit else { return .failure(.lineTooLong(limit: limit)) }
            let segment = UnsafeBufferPointer(rebasing: bytes[start..<newline])
            var line: [UInt8]
            if pending.isEmpty {
                line = Array(segment)
            } else {
                line = pending + segment
                pending.removeAll(keepingCapacity: true)
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            lines.append(line)
            start = newline + 1
        }
        guard pending.count + (bytes.count - start) <= limit else { return .failure(.lineTooLong(limit: limit)) }
        pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        return .success(lines)
    }

    package var hasPartialLine: Bool { !pending.isEmpty }

    /// At the end of the stream: the last line if it had no newline (what
    /// `printf '{"op":"get"}' | socat` sends), else `nil`.
    package mutating func finish() -> [UInt8]? {
        guard !pending.isEmpty else { return nil }
        defer { pending.removeAll() }
        if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
        return pending
    }
}
