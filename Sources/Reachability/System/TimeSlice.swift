private import CScheduling

/// The kernel's latency hint for a thread that sleeps until an event and
/// then has a little to do: a short time slice (EEVDF's custom slice, Linux
/// 6.12 and later), which puts the thread's deadline earlier when it wakes,
/// so that it tends to run before threads that woke with it and asked for
/// nothing. It gives no more CPU, and a thread that runs past its slice is
/// preempted sooner. Threads the thread starts afterwards inherit it.
///
/// Asked by reachd's own loops, the daemon's and a following command's: on
/// two cores, five watchers woken by one route change (bench/latency.py 100
/// hop), `reachd monitor` in-process answered at 1.75 to 1.83 times GLib's
/// p50 without it and 0.48 to 1.05 times with it, at about GLib's CPU per
/// change either way; the others in the same burst wait longer. A library
/// caller's threads are never changed: they are its own.
package enum TimeSlice {
    /// The shortest slice the kernel grants (0.1 ms).
    package static let short: Duration = .microseconds(100)

    /// What became of a request.
    package enum Outcome: Equatable {
        /// The kernel took it (and ignores it, before Linux 6.12).
        case granted
        /// The thread runs under another policy than the normal one (a
        /// user's SCHED_BATCH, SCHED_IDLE or real-time choice): not asked.
        case otherPolicy
        /// Refused, with this error number (EPERM under a seccomp filter).
        case refused(Int32)
    }

    /// Asks for `slice` for the calling thread.
    @discardableResult
    package static func request(_ slice: Duration = short) -> Outcome {
        let nanoseconds = UInt64(slice.components.seconds) * 1_000_000_000
            + UInt64(slice.components.attoseconds / 1_000_000_000)
        switch reachd_request_time_slice(nanoseconds) {
        case 0: return .granted
        case -1: return .otherPolicy
        case let error: return .refused(error)
        }
    }
}
