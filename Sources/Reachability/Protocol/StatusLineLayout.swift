/// What a reader may know of a status line from its bytes, without
/// decoding it: the layout ``StatusLineWriter`` writes, as `JSONEncoder`
/// with sorted keys would. So `"type"` comes near the end, and a status's
/// own `seq` comes just before its `source` and its `type` (a watched
/// target's object has a `seq` and a `source`, and no `type`).
///
/// A client passes a daemon's status line on as it came (issue 45: no
/// decoding on the way to the reader), and splices a new `seq` into it
/// where it must renumber, keeping the keys a newer daemon added. Kept
/// beside the writer, so that a change of the layout meets its readers.
package enum StatusLineLayout {
    /// Whether `line` says it is a status (an error line must not pass for
    /// one). Looked for from the end, where `"type"` is.
    package static func isStatus(_ line: [UInt8]) -> Bool {
        line.containsBytes(fromTheEnd: statusMarker)
    }

    /// Whether `line` is a status without its interface list.
    package static func isSummary(_ line: [UInt8]) -> Bool {
        line.firstRange(ofBytes: summaryMarker) != nil
    }

    /// `line` with its status's `seq` replaced and every other byte as it
    /// came; `nil` where the line is not laid out as a daemon writes it.
    package static func line(_ line: [UInt8], renumberedTo seq: UInt64) -> [UInt8]? {
        let key = Array(#""seq":"#.utf8), source = Array(#","source":""#.utf8), type = Array(#"","type":"status""#.utf8)
        var start = 0
        while let found = line[start...].firstRange(ofBytes: key) {
            start = found.upperBound
            var end = found.upperBound
            while end < line.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(line[end]) { end += 1 }
            guard end > found.upperBound, line[end...].starts(with: source) else { continue }
            let value = end + source.count
            guard let quote = line[value...].firstIndex(of: UInt8(ascii: "\"")),
                line[quote...].starts(with: type)
            else { continue }
            return Array(line[..<found.upperBound]) + Array(String(seq).utf8) + Array(line[end...])
        }
        return nil
    }

    private static let statusMarker = Array(#""type":"status""#.utf8)
    private static let summaryMarker = Array(#""detail":"summary""#.utf8)
}
