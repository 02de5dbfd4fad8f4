#if canImport(Glibc)
import Glibc
#endif

/// ``EventPoll``'s twin on `poll(2)`, for a client's handful of descriptors:
/// the loop lists what it waits on afresh before every wait, each under a
/// token of its own type (a `nil` descriptor, for a connection there is not,
/// is left out), so a descriptor that was closed and a new one given the same
/// number cannot be confused, and nothing has to be unregistered. A wait that
/// a signal interrupts returns no events, and the loop goes round again.
package struct PollSet<Token> {
    private var descriptors: [pollfd] = []
    private var tokens: [Token] = []

    package init() {}

    /// Empties the set for the next wait, keeping its room: a loop that
    /// lists its descriptors before every wait then makes no arrays for them.
    package mutating func removeAll() {
        descriptors.removeAll(keepingCapacity: true)
        tokens.removeAll(keepingCapacity: true)
    }

    /// Waits on `fd` under `token`; a `nil` or negative descriptor is skipped.
    package mutating func add(_ fd: Int32?, _ token: Token, interest: Interest = .readable) {
        guard let fd, fd >= 0 else { return }
        descriptors.append(pollfd(fd: fd, events: Int16(truncatingIfNeeded: interest.rawValue), revents: 0))
        tokens.append(token)
    }

    /// Waits until a descriptor is ready or `deadline` passes (`nil`: for
    /// ever), and returns the ready ones in the order they were added.
    package mutating func wait(until deadline: ContinuousClock.Instant?) throws(SystemError) -> [ReadinessEvent<Token>] {
        let count = poll(&descriptors, nfds_t(descriptors.count), Deadline.timeoutMilliseconds(until: deadline))
        guard count >= 0 else {
            if errno == EINTR { return [] }
            throw SystemError("poll")
        }
        var events: [ReadinessEvent<Token>] = []
        events.reserveCapacity(Int(count))
        for (index, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
            let returned = Int32(descriptor.revents)
            events.append(ReadinessEvent(
                token: tokens[index], readable: returned & Int32(POLLIN) != 0, writable: returned & Int32(POLLOUT) != 0,
                failed: returned & Int32(POLLHUP | POLLERR | POLLNVAL) != 0))
        }
        return events
    }
}

extension PollSet where Token == Int32 {
    /// Waits until `fd` is ready for `interest` or `deadline` passes; returns
    /// whether it is (a hang-up counts: the read or write then says why).
    package static func wait(
        for fd: Int32, _ interest: Interest = .readable, until deadline: ContinuousClock.Instant
    ) throws(SystemError) -> Bool {
        while true {
            var set = PollSet<Int32>()
            set.add(fd, fd, interest: interest)
            if try !set.wait(until: deadline).isEmpty { return true }
            if ContinuousClock.now >= deadline { return false }
        }
    }
}
