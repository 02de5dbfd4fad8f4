#if canImport(Glibc)
import Glibc
#endif

/// What a descriptor is waited for. The bits are `poll(2)`'s, which epoll(7)
/// shares (`EPOLLIN` is `POLLIN`, `EPOLLOUT` is `POLLOUT`).
package struct Interest: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package static let readable = Interest(rawValue: UInt32(POLLIN))
    package static let writable = Interest(rawValue: UInt32(POLLOUT))
}

/// A descriptor that is ready, named by the token its owner gave it: the
/// same shape from ``EventPoll`` (the daemon's thousands of clients) and
/// ``PollSet`` (a client's handful of descriptors).
package struct ReadinessEvent<Token> {
    package let token: Token
    package let readable: Bool
    package let writable: Bool
    /// A full hang-up or an error (reported whatever the interest): nobody
    /// is left to answer. A reader finds the end of its stream by reading.
    package let failed: Bool

    /// Readable, or failed: a read will not block, and tells which.
    package var readableOrFailed: Bool { readable || failed }
}

/// Deadlines as every loop here takes them: the earliest of what is due,
/// `nil` for "nothing is".
package enum Deadline {
    /// The earliest of `deadlines`; `nil` when none is set.
    package static func earliest(_ deadlines: ContinuousClock.Instant?...) -> ContinuousClock.Instant? {
        var found: ContinuousClock.Instant?
        for deadline in deadlines { found = earliest(found, deadline) }
        return found
    }

    /// The earlier of two deadlines; `nil` when neither is set. Without the
    /// arrays the list's form makes: every service asks it at every pass of
    /// the daemon's loop, and it was about 1.5k instructions a pass.
    package static func earliest(_ first: ContinuousClock.Instant?, _ second: ContinuousClock.Instant?)
        -> ContinuousClock.Instant?
    {
        guard let first else { return second }
        guard let second else { return first }
        return min(first, second)
    }

    /// Milliseconds from now until `deadline` for `poll(2)` and
    /// `epoll_wait(2)`: rounded up, so a wait never ends before its deadline,
    /// 0 once it has passed, and -1 (for ever) without one.
    package static func timeoutMilliseconds(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let (seconds, attoseconds) = max(deadline - .now, .zero).components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
