#if canImport(Glibc)
import Glibc
#endif

/// Accepts from one non-blocking listener, and keeps a daemon out of
/// descriptors from spinning on it: the daemon's Unix socket and its metrics
/// listener alike.
///
/// Out of descriptors (`EMFILE`, `ENFILE`), `accept` fails while the
/// connection stays queued, so the listener stays readable and a loop waiting
/// on it would wake at once, for ever. A spare descriptor is held for that:
/// freed, it lets one connection be accepted to be refused and closed (the
/// trick dbus-broker and libevent servers use). When even that fails, or
/// `accept` fails otherwise, the listener is paused: its owner stops waiting
/// on it until a descriptor frees (``resume()``) or ``retryAfter`` passes.
package final class Acceptor {
    /// How long a paused listener waits when nothing tells it a descriptor
    /// freed: descriptors also free where the owner can't see it (a probe's
    /// thread, a limit raised from outside).
    package static let retryAfter: Duration = .seconds(1)

    package enum Outcome {
        /// A connection to serve.
        case connection(Int32)
        /// A connection accepted with the spare descriptor, out of
        /// descriptors: the owner answers it if it can, and closes it.
        case refuse(Int32)
        /// Nothing more now: none waiting, or paused.
        case drained
        /// Paused from now on, for this reason: the owner stops waiting on
        /// ``fd`` until ``pausedUntil`` or ``resume()``.
        case paused(SystemError)
    }

    package let fd: Int32
    private var spare: Int32
    /// While paused, when to try again.
    package private(set) var pausedUntil: ContinuousClock.Instant?
    package var isPaused: Bool { pausedUntil != nil }

    package init(listener fd: Int32) {
        self.fd = fd
        spare = Self.openSpare()
    }

    deinit {
        if spare >= 0 { close(spare) }
    }

    /// The next connection waiting, or why there is none.
    package func next(now: ContinuousClock.Instant) -> Outcome {
        guard pausedUntil == nil else { return .drained }
        while true {
            let connection = UnixSocket.accept(from: fd)
            if connection >= 0 {
                // The spare comes after the connection: serving one is worth more.
                if spare < 0 { spare = Self.openSpare() }
                return .connection(connection)
            }
            switch errno {
            case EINTR, ECONNABORTED:
                continue
            case EAGAIN, EWOULDBLOCK:
                return .drained
            case EMFILE, ENFILE:
                let failure = SystemError("accept", errno: errno)
                if spare >= 0 {
                    close(spare)
                    let refused = UnixSocket.accept(from: fd)
                    spare = Self.openSpare()
                    if refused >= 0 { return .refuse(refused) }
                }
                pausedUntil = now + Self.retryAfter
                return .paused(failure)
            case let failure:
                pausedUntil = now + Self.retryAfter
                return .paused(SystemError("accept", errno: failure))
            }
        }
    }

    /// A descriptor freed, or the pause is over: accept again.
    package func resume() {
        pausedUntil = nil
    }

    /// Whether it is paused and the pause is over at `now`: the owner
    /// resumes it (and forgets it logged the pause).
    package func pauseIsOver(at now: ContinuousClock.Instant) -> Bool {
        pausedUntil.map { now >= $0 } ?? false
    }

    private static func openSpare() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
}

extension EventPoll {
    /// Waits on `acceptor`'s listener unless it is paused: out of
    /// descriptors, a readable listener would spin the loop. `waited` says
    /// what the poll was last told, so that an unchanged wait costs no
    /// `epoll_ctl`.
    package func follow(_ acceptor: Acceptor, as token: Token, waited: inout Bool) throws(SystemError) {
        guard acceptor.isPaused == waited else { return }
        try modify(acceptor.fd, token, interest: acceptor.isPaused ? [] : .readable)
        waited = !acceptor.isPaused
    }
}
