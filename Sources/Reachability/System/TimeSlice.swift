private import CScheduling
#if canImport(Glibc)
import Glibc
#endif

/// The kernel's latency hint for a thread that sleeps until an event and
/// then has a little to do: a short time slice (EEVDF's custom slice, Linux
/// 6.12 and later), which puts the thread's deadline earlier when it wakes,
/// so that it runs before threads that woke with it and asked for nothing.
/// It gives no more CPU, and a thread that runs past its slice is preempted
/// sooner.
///
/// Asked by reachd's own loops, the daemon's and a following command's:
/// on two cores, five watchers woken by one route change, `reachd monitor`
/// in-process answered at 2.1 to 2.5 times GLib's p50 without it and 0.32
/// to 0.46 times with it, with about GLib's CPU per change either way
/// (bench/latency.py). A library's caller is never changed: its threads
/// are its own.
package enum TimeSlice {
    /// The shortest slice the kernel grants (0.1 ms): a route change costs
    /// the daemon about that, a follower less.
    package static let short: Duration = .microseconds(100)

    /// Asks for `slice` for the calling thread; the error number where the
    /// kernel (or a seccomp filter) refused, `nil` where it took the request.
    /// A thread of another policy than the normal one is left as it is.
    @discardableResult
    package static func request(_ slice: Duration = short) -> Int32? {
        let nanoseconds = UInt64(slice.components.seconds) * 1_000_000_000
            + UInt64(slice.components.attoseconds / 1_000_000_000)
        return reachd_request_time_slice(nanoseconds) == 0 ? nil : errno
    }
}
