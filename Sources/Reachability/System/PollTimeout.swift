/// Milliseconds from now until `deadline`, for `poll(2)`: rounded up, so a poll
/// never wakes before the deadline, and 0 once it has passed.
package func pollMilliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
    let (seconds, attoseconds) = max(deadline - .now, .zero).components
    return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
}
