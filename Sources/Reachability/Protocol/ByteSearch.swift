extension RandomAccessCollection where Element == UInt8 {
    /// Where `marker` first occurs in these bytes; `nil` if nowhere, or if
    /// `marker` is empty: in `{"seq":7,"type":"status"}`, `"type":"status"`
    /// is found at 9..<24.
    ///
    /// Written by hand because the standard library's `firstRange(of:)`
    /// (from _StringProcessing) costs about 150 µs on a 3 KB status line in
    /// a release build (Swift 6.3), against under 1 µs for this loop: it ran
    /// on every status a following client passes on, and doubled the
    /// daemon's hop in `make bench`.
    package func firstRange(ofBytes marker: [UInt8]) -> Range<Index>? {
        guard let first = marker.first, count >= marker.count else { return nil }
        let offset: Int?? = withContiguousStorageIfAvailable { bytes in
            marker.withUnsafeBufferPointer { marker in
                var start = 0
                while start <= bytes.count - marker.count {
                    if bytes[start] == first, memcmpEqual(bytes, from: start, marker) { return start }
                    start += 1
                }
                return nil
            }
        }
        guard let offset else { return firstRange(of: marker) }
        guard let offset else { return nil }
        let lower = index(startIndex, offsetBy: offset)
        return lower..<index(lower, offsetBy: marker.count)
    }

    /// Whether `marker` occurs in these bytes, looked for from their end:
    /// for a key that sorts late in a line, such as a status line's
    /// `"type"`, which a following client looked for from the start on each
    /// line it passed on, 10k instructions a 1.5 KB line (callgrind, issue 45).
    package func containsBytes(fromTheEnd marker: [UInt8]) -> Bool {
        guard let first = marker.first, count >= marker.count else { return false }
        let found: Bool? = withContiguousStorageIfAvailable { bytes in
            marker.withUnsafeBufferPointer { marker in
                var start = bytes.count - marker.count
                while start >= 0 {
                    if bytes[start] == first, memcmpEqual(bytes, from: start, marker) { return true }
                    start -= 1
                }
                return false
            }
        }
        return found ?? (firstRange(ofBytes: marker) != nil)
    }
}

/// Whether `bytes` holds `marker` at `start` (which leaves room for it).
private func memcmpEqual(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, _ marker: UnsafeBufferPointer<UInt8>) -> Bool {
    var index = 1
    while index < marker.count {
        guard bytes[start + index] == marker[index] else { return false }
        index += 1
    }
    return true
}
