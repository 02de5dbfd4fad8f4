#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 timestamps in UTC with milliseconds, as the protocol spells them.
package enum Timestamp {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let wholeSeconds = Date.ISO8601FormatStyle()

    /// `2026-11-21T05:10:00.123Z`: ISO 8601, UTC, milliseconds.
    ///
    /// By hand, not with `style.format`: that took about 20 µs, and every
    /// published status is formatted twice (its JSON line, the daemon's log).
    /// A test compares the two on thousands of instants.
    package static func format(_ date: Date) -> String {
        // To the nearest millisecond, not down: a parsed ".123" is a Double a
        // hair below it, and rounding down moved every re-encoded timestamp
        // 1 ms earlier. Whole milliseconds first, so .9996 carries into the second.
        let total = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(total.floorDivided(by: 1000))
        let milliseconds = Int32(total - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = ""
        text.reserveCapacity(24)
        func append(_ value: Int32, width: Int) {
            let digits = String(value)
            for _ in digits.count..<max(width, digits.count) { text.append("0") }
            text += digits
        }
        append(parts.tm_year + 1900, width: 4)
        text.append("-")
        append(parts.tm_mon + 1, width: 2)
        text.append("-")
        append(parts.tm_mday, width: 2)
        text.append("T")
        append(parts.tm_hour, width: 2)
        text.append(":")
        append(parts.tm_min, width: 2)
        text.append(":")
        append(parts.tm_sec, width: 2)
        text.append(".")
        append(milliseconds, width: 3)
        text.append("Z")
        return text
    }

    /// What ``format(_:)`` writes by hand, through Foundation's formatter.
    package static func formatThroughFoundation(_ date: Date) -> String {
        style.format(date)
    }

    /// The instant `text` names, or `nil` when it is not RFC 3339 with or
    /// without fractional seconds.
    package static func parse(_ text: String) -> Date? {
        (try? style.parse(text)) ?? (try? wholeSeconds.parse(text))
    }
}

extension Int64 {
    /// Division rounding towards negative infinity: instants before 1970 too.
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
