import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Carries an app's reports that its requests fail to the daemon, as a
/// connectivity check request, without ever blocking the app and without
/// letting a storm of reports become a storm of connections: the first
/// report is sent at once, on a thread of its own; the reports within
/// ``spacing`` of it become one more, sent when the spacing ends. None is
/// lost (the last failure always reaches the daemon) while a thread can be
/// started; an app at its thread limit loses the reports made until one
/// can, never the process. The daemon spaces the probes themselves,
/// whoever asks (5 s per family).
final class FailureReporter: Sendable {
    /// The least time between two reports from one monitor.
    static let spacing: Duration = .seconds(1)

    private let state = Mutex((sending: false, pending: false))
    private let send: @Sendable () -> Void

    /// `send`: one report, blocking for at most its own deadline.
    init(send: @escaping @Sendable () -> Void) {
        self.send = send
    }

    /// A failure to report: sent now, or folded into the one due when the
    /// spacing ends.
    func report() {
        // Sending already: one more when that is done, however many come.
        let start = state.withLock { state in
            let start = !state.sending
            (state.sending, state.pending) = (true, !start)
            return start
        }
        guard start else { return }
        // An app at its thread limit loses the report, never the process.
        let started = startDetachedThreadIfPossible { [self] in
            while true {
                send()
                // The thread sleeps out the spacing: no timer, no wake-up.
                var pause = timespec(tv_sec: Int(Self.spacing.components.seconds), tv_nsec: 0)
                var left = timespec()
                while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
                // Another is due if one came meanwhile; else this thread is done.
                let again = state.withLock { state in
                    let again = state.pending
                    (state.sending, state.pending) = (again, false)
                    return again
                }
                guard again else { return }
            }
        }
        if started != 0 { state.withLock { $0 = (sending: false, pending: false) } }
    }
}
