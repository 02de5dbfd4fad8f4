/// A `ContinuousClock.Instant` kept in a layout this module knows when it
/// is compiled: its distance from one instant fixed for the process.
///
/// `ContinuousClock.Instant` is not frozen (the standard library is built
/// for library evolution), so any value that holds one, and any enum whose
/// case holds such a value, is copied, compared and destroyed through its
/// runtime witnesses. A follow session's phase held its daemon's first
/// answer's deadline, and so cost the value witnesses of the whole phase
/// at each step. `Duration` is frozen: a value holding this one is laid
/// out, copied and compared inline.
struct StoredInstant: Equatable, Sendable {
    /// The origin every stored instant is measured from: any instant will
    /// do, as long as it stays the same for the process.
    private static let origin = ContinuousClock.Instant.now
    private let sinceOrigin: Duration

    init(_ instant: ContinuousClock.Instant) {
        sinceOrigin = Self.origin.duration(to: instant)
    }

    var instant: ContinuousClock.Instant { Self.origin.advanced(by: sinceOrigin) }
}
