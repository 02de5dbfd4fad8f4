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
        // Digits into the string's own 24 bytes: a String per field was 3 %
        // of a route change's CPU in-process (issue 45's profile), and an
        // array of the bytes first cost an allocation more than the string.
        return String(unsafeUninitializedCapacity: 24) { text in
            func put(_ value: Int32, width: Int, at offset: Int) {
                var value = value
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    text[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            // Years past 9999 (or before 1) are no timestamp a kernel event has;
            // clamped rather than cut to the wrong digits.
            put(min(max(parts.tm_year + 1900, 0), 9999), width: 4, at: 0)
            put(parts.tm_mon + 1, width: 2, at: 5)
            put(parts.tm_mday, width: 2, at: 8)
            put(parts.tm_hour, width: 2, at: 11)
            put(parts.tm_min, width: 2, at: 14)
            put(parts.tm_sec, width: 2, at: 17)
            put(milliseconds, width: 3, at: 20)
            (text[4], text[7], text[10]) = (UInt8(ascii: "-"), UInt8(ascii: "-"), UInt8(ascii: "T"))
            (text[13], text[16], text[19], text[23]) = (UInt8(ascii: ":"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "Z"))
            return 24
        }
    }

    /// What ``format(_:)`` writes by hand, through Foundation's formatter.
    package static func formatThroughFoundation(_ date: Date) -> String {
        style.format(date)
    }

    /// The instant `text` names, or `nil` when it is not an RFC 3339 UTC
    /// timestamp (`2026-11-21T05:10:00.123Z`, `Z` or `z`, any number of
    /// fractional digits, rounded to the protocol's milliseconds).
    ///
    /// By hand, with `timegm`, as ``format(_:)`` uses `gmtime_r`: the same
    /// proleptic Gregorian calendar both ways. Foundation's parser switches to
    /// the Julian calendar before 1582, so a status from year 1013 moved days
    /// in a round trip (libFuzzer found it).
    package static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int32(byte - 48)
            }
            return value
        }
        func byte(_ index: Int, is allowed: String) -> Bool { allowed.utf8.contains(bytes[index]) }
        guard byte(4, is: "-"), byte(7, is: "-"), byte(10, is: "Tt"), byte(13, is: ":"), byte(16, is: ":"),
            byte(bytes.count - 1, is: "Zz"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var milliseconds: Int64 = 0
        if bytes.count > 20 {
            // ".123456" between the seconds and the Z.
            guard byte(19, is: "."), bytes.count > 21, let digits = number(20..<min(bytes.count - 1, 29)),
                bytes.count - 1 <= 29 || number(29..<(bytes.count - 1)) != nil
            else { return nil }
            let count = min(bytes.count - 21, 9)
            var scale = 1.0
            for _ in 0..<count { scale *= 10 }
            milliseconds = Int64((Double(digits) / scale * 1000).rounded())
        }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        // A leap second (:60) is the next second; checked as :59, so that a
        // day the month lacks (February 30th) is refused, not moved to March.
        parts.tm_sec = min(second, 59)
        let seconds = Int64(timegm(&parts)) + Int64(second - parts.tm_sec)
        guard parts.tm_mday == day, parts.tm_mon == month - 1 else { return nil }
        return Date(timeIntervalSince1970: Double(seconds * 1000 + milliseconds) / 1000)
    }
}

extension Int64 {
    /// Division rounding towards negative infinity: instants before 1970 too.
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
