private import CEventPoll
#if canImport(Glibc)
import Glibc
#endif

/// A token an ``EventPoll`` can carry through the kernel: epoll hands back
/// the 64 bits it was given, which name the descriptor to its owner.
package protocol EventToken {
    init?(eventData: UInt64)
    var eventData: UInt64 { get }
}

/// A wait for readiness on epoll(7), for the daemon's loop: a wake-up costs
/// what is ready, not what is connected. With `poll(2)` every wake-up rebuilt
/// and the kernel scanned a descriptor list of every client: at 10,000
/// subscribers the first one heard of a change 8 ms late. A client's loop,
/// with a handful of descriptors that come and go, uses ``PollSet``, its twin.
///
/// Level-triggered, like `poll`: a descriptor stays ready until served, so a
/// client served a bounded amount per wake-up is simply reported again.
/// Each descriptor carries a token of the owner's type, so an event for a
/// connection closed earlier in the same batch cannot be mistaken for a new
/// connection that was given the same descriptor number. Closing a
/// descriptor takes it out of the poll; a new one must be added.
package final class EventPoll<Token: EventToken> {
    private let fd: Int32
    private let events: UnsafeMutableBufferPointer<epoll_event>

    /// - Parameter capacity: events taken per wait; more stay ready for the next.
    package init(capacity: Int = 1024) throws(SystemError) {
        fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw SystemError("epoll_create1") }
        events = .allocate(capacity: capacity)
    }

    deinit {
        close(fd)
        events.deallocate()
    }

    package func add(_ descriptor: Int32, _ token: Token, interest: Interest) throws(SystemError) {
        try control(EPOLL_CTL_ADD, descriptor, token, interest)
    }

    package func modify(_ descriptor: Int32, _ token: Token, interest: Interest) throws(SystemError) {
        try control(EPOLL_CTL_MOD, descriptor, token, interest)
    }

    private func control(_ operation: Int32, _ descriptor: Int32, _ token: Token, _ interest: Interest) throws(SystemError) {
        var event = epoll_event()
        event.events = interest.rawValue
        event.data.u64 = token.eventData
        guard epoll_ctl(fd, operation, descriptor, &event) == 0 else { throw SystemError("epoll_ctl") }
    }

    /// Waits until a descriptor is ready or `deadline` passes (`nil`: for
    /// ever; one already passed: only a look), and returns what is ready;
    /// empty on a timeout or a signal.
    package func wait(until deadline: ContinuousClock.Instant?) throws(SystemError) -> [ReadinessEvent<Token>] {
        let count = epoll_wait(fd, events.baseAddress, Int32(events.count), Deadline.timeoutMilliseconds(until: deadline))
        guard count >= 0 else {
            if errno == EINTR { return [] }
            throw SystemError("epoll_wait")
        }
        // A plain loop, where `compactMap` over the events was 7k
        // instructions per wake-up of the daemon: called from another
        // module, this generic method is not specialized, and each closure
        // of the map went through runtime metadata. Now 2.6k (callgrind).
        let failure = EPOLLHUP.rawValue | EPOLLERR.rawValue
        var ready: [ReadinessEvent<Token>] = []
        ready.reserveCapacity(Int(count))
        for event in events[0..<Int(count)] {
            guard let token = Token(eventData: event.data.u64) else { continue }
            ready.append(ReadinessEvent(
                token: token, readable: event.events & EPOLLIN.rawValue != 0,
                writable: event.events & EPOLLOUT.rawValue != 0, failed: event.events & failure != 0))
        }
        return ready
    }
}
