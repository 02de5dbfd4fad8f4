import CSystemd
import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// logind's word that the host resumed from suspend (`PrepareForSleep(false)`
/// on the system bus): the network the host wakes on may be another, or
/// the same one gone dead, and no route event need say so. The daemon's
/// check probes at once.
///
/// Only logind's word counts: a signal is taken from the bus name's current
/// owner alone (asked with `GetNameOwner`, followed by `NameOwnerChanged`).
/// A match on the sender `org.freedesktop.login1` cannot check a
/// well-known name, and the bus routes a unicast signal from any peer to
/// its destination: without this, any local user could say the host
/// resumed, as often as they liked (GLib's CVE-2024-34397 is the same
/// class).
///
/// Through libsystemd's sd-bus, driven by the daemon's loop: sd-bus says
/// which descriptor to wait on, for what and until when; nothing blocks
/// (connecting, authenticating and adding the match are all answered
/// through that descriptor). Idle, it waits for a signal the bus sends
/// only on suspend and resume: no timer, no wake-up. Only where a system bus
/// exists; one that goes away is tried again, from 5 s, doubling.
final class SleepWatch {

    private var bus: OpaquePointer?
    private var match: OpaquePointer?
    private var ownerMatch: OpaquePointer?
    private var ownerQuery: OpaquePointer?
    /// Where the signal handlers leave what they saw, for ``process(_:)`` to take.
    private let inbox = LogindInbox()
    private let logger: Logger
    /// The descriptor and interest the event poll has, to add or modify it
    /// when sd-bus wants another.
    private var registered: (fd: Int32, interest: Interest)?
    /// Failed connections in a row, for the backoff.
    private var failures = 0
    private static let backoff = Backoff(initial: .seconds(5), maximum: .seconds(300))
    /// When to connect again, after the bus went away.
    private var retryAt: ContinuousClock.Instant?

    /// `nil` where no system bus exists: no `DBUS_SYSTEM_BUS_ADDRESS`, and
    /// no socket at the standard path. One that refuses the first
    /// connection is tried again, as one that goes away.
    init?(logger: Logger) {
        guard getenv("DBUS_SYSTEM_BUS_ADDRESS") != nil || access("/run/dbus/system_bus_socket", F_OK) == 0 else {
            return nil
        }
        self.logger = logger
        if !connect() { retryLater(.now) }
    }

    deinit { disconnect() }

    /// When sd-bus must be let work though nothing arrived (a call's
    /// timeout), or when to connect again.
    var nextDeadline: ContinuousClock.Instant? {
        guard bus != nil else { return retryAt }
        return timeLeft.map { .now + $0 }
    }

    /// Whether sd-bus must be let work now though its descriptor said
    /// nothing: its timeout passed, or a reconnection is due. Judged on
    /// sd-bus's own clock (CLOCK_MONOTONIC): a deadline moved onto another
    /// clock and compared with an earlier reading would never come due.
    func isDue(_ now: ContinuousClock.Instant) -> Bool {
        guard bus != nil else { return retryAt.map { $0 <= now } ?? false }
        return timeLeft == .zero
    }

    /// What is left of sd-bus's timeout; `nil` when it has none.
    private var timeLeft: Duration? {
        guard let bus else { return nil }
        var usec: UInt64 = 0
        guard sd_bus_get_timeout(bus, &usec) > 0, usec != UInt64.max else { return nil }
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let nowUsec = UInt64(clock.tv_sec) * 1_000_000 + UInt64(clock.tv_nsec) / 1_000
        return usec > nowUsec ? .microseconds(Int64(usec - nowUsec)) : .zero
    }

    /// Brings the event poll in line with what sd-bus waits for.
    func update(_ poll: EventPoll<DaemonEventToken>) throws(SystemError) {
        guard let bus else {
            registered = nil
            return
        }
        let fd = sd_bus_get_fd(bus)
        let events = sd_bus_get_events(bus)
        guard fd >= 0, events >= 0 else { return }
        let interest = Interest(rawValue: UInt32(events) & (Interest.readable.rawValue | Interest.writable.rawValue))
        if let registered, registered.fd == fd {
            guard registered.interest != interest else { return }
            try poll.modify(fd, .bus, interest: interest)
        } else {
            try poll.add(fd, .bus, interest: interest)
        }
        registered = (fd, interest)
    }

    /// The bus's descriptor was ready, or a deadline passed: lets sd-bus
    /// work (a bounded amount). Returns whether the host resumed.
    func process(_ now: ContinuousClock.Instant) -> Bool {
        if bus == nil {
            guard let retryAt, now >= retryAt else { return false }
            self.retryAt = nil
            if !connect() { retryLater(now) }
            return false
        }
        for _ in 0..<64 {
            let result = sd_bus_process(bus, nil)
            // Before a failure is judged, as the callback's own words were.
            takeMatchAnswer()
            if result < 0 {
                // Said once; while it stays away, each retry only at debug level.
                logger.log(level: failures == 0 ? .warning : .debug,
                           "lost the system bus; a resume from suspend goes unnoticed until it is back",
                           metadata: ["error": "\(String(cString: strerror(-result)))"])
                disconnect()
                retryLater(now)
                break
            }
            if result == 0 { break }
        }
        defer { inbox.resumed = false }
        return inbox.resumed
    }

    /// Opens the bus and asks for the signal, without waiting for either.
    private func connect() -> Bool {
        var opened: OpaquePointer?
        let result = sd_bus_open_system(&opened)
        guard result >= 0, let opened else {
            logger.log(level: failures == 0 ? .warning : .debug,
                       "cannot reach the system bus; a resume from suspend goes unnoticed until it answers",
                       metadata: ["error": "\(String(cString: strerror(-result)))"])
            return false
        }
        bus = opened
        inbox.loginOwner = nil
        let userdata = Unmanaged.passUnretained(inbox).toOpaque()
        // Who owns logind's name, then every change of owner: the match goes
        // first, so no change between the two is missed, and the answer,
        // which the bus sends after any change it matched before, is newer.
        // Filtered on the name (arg0) by the bus: every client that comes
        // or goes changes a name, and none of those may wake the daemon.
        var added = sd_bus_add_match_async(
            opened, &ownerMatch,
            "type='signal',sender='\(LogindInbox.busDriver)',path='/org/freedesktop/DBus',interface='\(LogindInbox.busDriver)',"
                + "member='NameOwnerChanged',arg0='\(LogindInbox.login1)'",
            LogindInbox.nameOwnerChanged, nil, userdata)
        if added >= 0 { added = askOwner(opened, userdata) }
        if added >= 0 {
            added = sd_bus_match_signal_async(
                opened, &match, LogindInbox.login1, "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                "PrepareForSleep", LogindInbox.prepareForSleep, LogindInbox.matchAdded, userdata)
        }
        guard added >= 0 else {
            logger.warning("cannot ask the system bus for logind's sleep signal; a resume from suspend goes unnoticed",
                           metadata: ["error": "\(String(cString: strerror(-added)))"])
            disconnect()
            return false
        }
        return true
    }

    /// The bus's answer to adding the match: said once, at debug level.
    private func takeMatchAnswer() {
        switch inbox.matchAnswer {
        case nil:
            return
        case .added:
            failures = 0
            logger.debug("watching logind's sleep signal on the system bus")
        case .refused(let name):
            // No reply: the bus hung up, which is said when sd-bus finds it closed.
            logger.log(
                level: name == "org.freedesktop.DBus.Error.NoReply" ? .debug : .warning,
                "the system bus did not add the match for logind's sleep signal; a resume from suspend goes unnoticed",
                metadata: ["error": "\(name)"])
        }
        inbox.matchAnswer = nil
    }

    private func retryLater(_ now: ContinuousClock.Instant) {
        retryAt = now + Self.backoff.delay(attempt: failures)
        failures += 1
    }

    /// `GetNameOwner("org.freedesktop.login1")`, answered to ``LogindInbox/ownerAnswer``.
    /// Built by parts: Swift cannot call sd-bus's variadic helpers.
    private func askOwner(_ bus: OpaquePointer, _ userdata: UnsafeMutableRawPointer) -> Int32 {
        var call: OpaquePointer?
        var result = sd_bus_message_new_method_call(
            bus, &call, LogindInbox.busDriver, "/org/freedesktop/DBus", LogindInbox.busDriver, "GetNameOwner")
        guard result >= 0, let call else { return result }
        defer { sd_bus_message_unref(call) }
        result = LogindInbox.login1.withCString { sd_bus_message_append_basic(call, CChar(UInt8(ascii: "s")), $0) }
        guard result >= 0 else { return result }
        return sd_bus_call_async(bus, &ownerQuery, call, LogindInbox.ownerAnswer, userdata, 0)
    }

    private func disconnect() {
        match = sd_bus_slot_unref(match)
        ownerMatch = sd_bus_slot_unref(ownerMatch)
        ownerQuery = sd_bus_slot_unref(ownerQuery)
        // Closed without flushing: a flush could wait on a bus that hangs.
        bus = sd_bus_close_unref(bus)
        registered = nil
    }
}
