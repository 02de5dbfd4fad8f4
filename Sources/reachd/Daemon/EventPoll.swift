private import CEventPoll
import Reachability
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's wait for readiness, on epoll(7): a wake-up costs what is
/// ready, not what is connected. With `poll(2)` every wake-up rebuilt and the
/// kernel scanned a descriptor list of every client: at 10,000 subscribers the
/// first one heard of a change 8 ms late.
///
/// Level-triggered, like `poll`: a descriptor stays ready until served, so a
/// client served a bounded amount per wake-up is simply reported again.
/// Each descriptor carries a token of the caller's choosing, so an event for
/// a connection closed earlier in the same batch cannot be mistaken for a new
/// connection that was given the same descriptor number.
final class EventPoll {
    struct Interest: OptionSet, Equatable {
        let rawValue: UInt32
        static let readable = Interest(rawValue: EPOLLIN.rawValue)
        static let writable = Interest(rawValue: EPOLLOUT.rawValue)
    }

    struct Event {
        let token: UInt64
        let readable: Bool
        let writable: Bool
        /// A full hang-up or an error (reported whatever the interest):
        /// nobody is left to answer.
        let failed: Bool
    }

    private let fd: Int32
    private let events: UnsafeMutableBufferPointer<epoll_event>

    /// - Parameter capacity: events taken per wait; more stay ready for the next.
    init(capacity: Int = 1024) throws(SystemError) {
        fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw SystemError("epoll_create1") }
        events = .allocate(capacity: capacity)
    }

    deinit {
        close(fd)
        events.deallocate()
    }

    func add(_ descriptor: Int32, token: UInt64, interest: Interest) throws(SystemError) {
        try control(EPOLL_CTL_ADD, descriptor, token: token, interest: interest)
    }

    func modify(_ descriptor: Int32, token: UInt64, interest: Interest) throws(SystemError) {
        try control(EPOLL_CTL_MOD, descriptor, token: token, interest: interest)
    }

    private func control(_ operation: Int32, _ descriptor: Int32, token: UInt64, interest: Interest) throws(SystemError) {
        var event = epoll_event()
        event.events = interest.rawValue
        event.data.u64 = token
        guard epoll_ctl(fd, operation, descriptor, &event) == 0 else { throw SystemError("epoll_ctl") }
    }

    /// Waits up to `timeout` milliseconds (-1: for ever) and returns what is
    /// ready; empty on a timeout or a signal.
    func wait(timeout: Int32) throws(SystemError) -> [Event] {
        let count = epoll_wait(fd, events.baseAddress, Int32(events.count), timeout)
        guard count >= 0 else {
            if errno == EINTR { return [] }
            throw SystemError("epoll_wait")
        }
        let failure = EPOLLHUP.rawValue | EPOLLERR.rawValue
        return events[0..<Int(count)].map { event in
            Event(
                token: event.data.u64, readable: event.events & EPOLLIN.rawValue != 0,
                writable: event.events & EPOLLOUT.rawValue != 0, failed: event.events & failure != 0)
        }
    }
}
