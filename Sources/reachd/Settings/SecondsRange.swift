/// What a number of seconds from the command line or reachd.conf may be, and
/// the one conversion of such a number to a `Duration`.
///
/// Every time value passes here: `Duration.milliseconds(Int64(1e300 * 1000))`
/// traps, so `timeout = 1e300` used to kill the daemon at start-up (exit 132),
/// and a value that rounds to zero would make a loop spin.
struct SecondsRange: Sendable, CustomStringConvertible {
    let lowest: Double
    let highest: Double
    /// Whether 0 is accepted, meaning "no limit" (`wait-online -t 0`).
    var zeroMeansForever = false

    /// `--idle-timeout`: long enough for a client to send a request, at most a day.
    static let idleTimeout = SecondsRange(lowest: 0.1, highest: 86_400)
    /// `--check-timeout`, `[connectivity] timeout`: a whole check, its retry included.
    static let checkTimeout = SecondsRange(lowest: 0.1, highest: 600)
    /// `--check-interval`, `[connectivity] interval`: between checks of a working path, at most a week.
    static let checkInterval = SecondsRange(lowest: 1, highest: 604_800)
    /// `[connectivity] passive_window`: how long failures count together.
    static let passiveWindow = SecondsRange(lowest: 0.1, highest: 600)
    /// `wait-online --timeout`: 0 waits forever, else at most a year.
    static let waitTimeout = SecondsRange(lowest: 0.001, highest: 31_536_000, zeroMeansForever: true)

    /// "a number of seconds from 0.1 to 86400", for error messages.
    var description: String {
        (zeroMeansForever ? "0 (no limit) or " : "") + "a number of seconds from \(Self.text(lowest)) to \(Self.text(highest))"
    }

    /// The duration `text` says, `.zero` for an accepted 0, or `nil` when it
    /// is not a number in the range (NaN, infinities, negatives included).
    func duration(_ text: String) -> Duration? {
        Double(text.trimmingSpaces()).flatMap(duration)
    }

    /// The duration of `seconds`, or `nil` when it is out of the range.
    func duration(_ seconds: Double) -> Duration? {
        if seconds == 0 && zeroMeansForever { return .zero }
        guard seconds >= lowest, seconds <= highest else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    private static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
