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
        var lines: [[UInt8]] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                lines.append(pending)
                pending.removeAll(keepingCapacity: true)
            } else {
                guard pending.count < limit else { throw .lineTooLong(limit: limit) }
                pending.append(byte)
            }
        }
        return lines
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
