import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGTERM and SIGINT into a byte on the daemon's stop pipe, which its
/// poll loop watches: the loop then closes its clients and removes its socket.
///
/// Not swift-service-lifecycle's ServiceGroup: on Linux, once Swift's
/// concurrency runtime has started its worker pool, libdispatch wakes once a
/// second to monitor it (measured with `strace -c -f`: 3 timerfd_settime and
/// 6 epoll_wait every 3 s while an async main waits; none from a thread that
/// blocks in `poll`). The daemon must make no system calls when idle, so it
/// stays off the runtime entirely and takes its signals here.
enum ShutdownSignals {
    /// Where the handlers write. Set once, before they are installed.
    nonisolated(unsafe) private static var pipe: Int32 = -1

    static func install(_ stop: WakeSignal) {
        pipe = stop.writeDescriptor
        for signalNumber in [SIGTERM, SIGINT] {
            // Only async-signal-safe work here: one write(2).
            signal(signalNumber) { _ in
                var byte: UInt8 = 1
                _ = write(ShutdownSignals.pipe, &byte, 1)
            }
        }
        // Clients and stderr may vanish; a write to them must fail, not kill us.
        signal(SIGPIPE, SIG_IGN)
        // A child inherits its parent's signal mask; a supervisor that blocks
        // SIGTERM (some test runners do) would otherwise leave it pending for ever.
        var handled = sigset_t()
        sigemptyset(&handled)
        sigaddset(&handled, SIGTERM)
        sigaddset(&handled, SIGINT)
        sigprocmask(SIG_UNBLOCK, &handled, nil)
    }
}
