#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RFC 3339 timestamps in UTC with milliseconds, as the protocol spells them.
package enum Timestamp {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let wholeSeconds = Date.ISO8601FormatStyle()

    package static func format(_ date: Date) -> String {
        style.format(date)
    }

    package static func parse(_ text: String) -> Date? {
        (try? style.parse(text)) ?? (try? wholeSeconds.parse(text))
    }
}
