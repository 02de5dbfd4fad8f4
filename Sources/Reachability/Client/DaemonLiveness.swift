#if canImport(Glibc)
import Glibc
#endif

/// Notices that a daemon a client subscribed to has stopped answering
/// (SIGSTOP, a debugger, a deadlock), without any timer while the network is
/// quiet.
///
/// A subscription alone can't tell: the daemon publishes only changes, so a
/// silent daemon and a quiet network look alike. The kernel can tell when
/// there is something to publish, so a small netlink socket of our own (the
/// sentinel) listens to the groups the daemon follows. When it reports
/// something, the subscription has ``newsGrace`` to bring a byte the daemon
/// wrote after the change (counted past what was queued when the sentinel
/// was read): the daemon runs, and is asked nothing. Else it is asked for a
/// status on a connection of its own (`get`, which every daemon answers)
/// and must answer within ``answerTimeout``. At most one probe per
/// ``probeSpacing``: a route flood that changes nothing published costs the
/// daemon two answers a second per client. A kernel change is therefore
/// noticed within spacing + timeout (1.5 s).
///
/// Without the grace, every change cost the daemon a connection and an
/// answer per following client, as it published the same change to them.
///
/// A probe that got no answer is kept open: a daemon that resumes answers it,
/// and that wakes the client, so a stopped daemon costs no polling either.
/// One per session, its sentinel kept across reconnections.
struct DaemonLiveness {
    static let probeSpacing: Duration = .milliseconds(500)
    static let answerTimeout: Duration = .seconds(1)
    /// How long a change's news may take before the daemon is asked; at most
    /// ``probeSpacing``, so that the bound above holds.
    static let newsGrace: Duration = .milliseconds(250)

    enum Verdict: Equatable {
        /// Nothing to say.
        case none
        /// The probe got no answer in time.
        case notAnswering(DaemonClientError)
        /// A daemon that was not answering answered.
        case answeringAgain
        /// The daemon closed the probe without a word: it is gone.
        case gone(DaemonClientError)
    }

    /// The daemon's socket, once a subscription to it is made.
    private(set) var path = ""
    private let sentinel: NetlinkEventSocket
    private var probe: DaemonConnection?
    // Its times are kept as ``StoredInstant``s: the session reads its
    // descriptors and deadline at each turn, and a value holding a
    // ContinuousClock.Instant is copied through runtime witnesses.
    private var probeAnswerBy: ContinuousClock.Instant? {
        get { storedProbeAnswerBy?.instant }
        set { storedProbeAnswerBy = newValue.map(StoredInstant.init) }
    }
    private var storedProbeAnswerBy: StoredInstant?
    private var nextProbeAllowed: ContinuousClock.Instant {
        get { storedNextProbeAllowed.instant }
        set { storedNextProbeAllowed = StoredInstant(newValue) }
    }
    private var storedNextProbeAllowed = StoredInstant(.now)
    /// A kernel change not yet probed for, waiting for its news or the spacing.
    private struct PendingProbe {
        /// When the probe is sent, unless news came first.
        var due: ContinuousClock.Instant {
            get { storedDue.instant }
            set { storedDue = StoredInstant(newValue) }
        }
        private var storedDue: StoredInstant
        /// The subscription's byte count past which a byte was written after
        /// the latest change: what it had received and had queued when the
        /// sentinel was read. `nil`: the kernel would not say, and only the
        /// probe counts.
        var newsFence: Int?

        init(due: ContinuousClock.Instant, newsFence: Int?) {
            storedDue = StoredInstant(due)
            self.newsFence = newsFence
        }
    }

    private var pending: PendingProbe?
    /// The last probe got no answer in time.
    private(set) var isUnresponsive = false

    init() throws(NetlinkError) {
        sentinel = try NetlinkEventSocket(receiveBufferBytes: 64 * 1024)
    }

    /// Starts over for a subscription about to be made to the daemon at
    /// `path`: what the sentinel heard before is dropped, so that a change
    /// the kernel reports between the daemon's first answer and now is heard,
    /// and nothing older.
    mutating func listen(to path: String) {
        try? sentinel.discardQueued()
        forget()
        self.path = path
    }

    /// The subscription is gone: its probe too, and what was said about it.
    mutating func forget() {
        probe = nil
        probeAnswerBy = nil
        pending = nil
        isUnresponsive = false
        nextProbeAllowed = .now
    }

    /// Not while a probe that got no answer is kept open: its answer is what
    /// comes next. Without one (a connect that timed out on a full queue),
    /// the next kernel change sends another.
    var sentinelDescriptor: Int32? { isUnresponsive && probe != nil ? nil : sentinel.fileDescriptor }
    var probeDescriptor: Int32? { probe?.fd }

    /// When ``verdict(probeReadable:kernelChanged:subscription:now:)`` must
    /// run even if nothing is ready: a due probe, or an answer due.
    var nextDeadline: ContinuousClock.Instant? { probeAnswerBy ?? pending?.due }

    /// What the readable descriptors and the clock say, in the order that
    /// matters: the probe's answer, then a kernel change, then a due probe
    /// or an overdue answer. `subscription`: the connection the daemon
    /// publishes on, whose bytes may answer for it.
    mutating func verdict(
        probeReadable: Bool, kernelChanged: Bool, subscription: DaemonConnection, now: ContinuousClock.Instant
    ) -> Verdict {
        var verdict = probeReadable ? self.probeReadable(now: now) : .none
        if case .none = verdict, kernelChanged { self.kernelChanged(subscription: subscription, now: now) }
        if case .none = verdict { verdict = check(now: now) }
        return verdict
    }

    /// The subscription was read: a byte written after the pending change
    /// shows the daemon running, and the probe is not sent.
    mutating func heard(_ subscription: DaemonConnection) {
        guard let fence = pending?.newsFence, subscription.bytesReceived > fence else { return }
        pending = nil
    }

    /// The sentinel is readable: the kernel reported something.
    private mutating func kernelChanged(subscription: DaemonConnection, now: ContinuousClock.Instant) {
        try? sentinel.discardQueued()
        guard probe == nil else { return }
        // What is queued now was written before this was read, so before
        // the change: only what comes after it counts. Unknown: no news
        // counts, and the probe goes as before.
        let fence = subscription.queuedBytes.map { subscription.bytesReceived + $0 }
        guard pending != nil else {
            pending = PendingProbe(due: max(now + Self.newsGrace, nextProbeAllowed), newsFence: fence)
            return
        }
        // A later change while one waits: the news must be of it (the daemon
        // may have stopped after publishing the first), and the probe stays
        // due when it was, so a flood cannot put it off.
        if pending?.newsFence != nil { pending?.newsFence = fence }
    }

    /// Starts a due probe, or gives up on one not answered in time.
    private mutating func check(now: ContinuousClock.Instant) -> Verdict {
        if let due = probeAnswerBy, now >= due {
            probeAnswerBy = nil
            isUnresponsive = true
            return .notAnswering(.timedOut(path: path, timeout: Self.answerTimeout))
        }
        guard let due = pending?.due, probe == nil, now >= due else { return .none }
        pending = nil
        do throws(DaemonClientError) {
            // A short connect: a full listen queue blocks it.
            let connection = try DaemonConnection(path: path, timeout: .milliseconds(100))
            try connection.send([.get])
            probe = connection
            probeAnswerBy = now + Self.answerTimeout
            return .none
        } catch {
            switch error {
            case .notRunning, .closed, .connectionFailed, .otherNetwork, .unnamedNetwork, .untrustedOwner: return .gone(error)
            case .timedOut:
                // Each try blocks for the connect timeout: not at every change of a flood.
                isUnresponsive = true
                nextProbeAllowed = now + Self.probeSpacing
                return .notAnswering(error)
            case .rejected, .protocolError:
                // It refused us (too_many_clients): refusing is answering.
                nextProbeAllowed = now + Self.probeSpacing
                return .none
            }
        }
    }

    /// The probe connection is readable: any answer, a refusal included,
    /// proves the daemon runs; an end without one says it is gone.
    private mutating func probeReadable(now: ContinuousClock.Instant) -> Verdict {
        guard let connection = probe else { return .none }
        let answer: [[UInt8]]?
        do { answer = try connection.readAvailable() } catch { answer = nil }
        // Woken with nothing to read; any byte, even half a line, proves it runs.
        if answer?.isEmpty == true, connection.bytesReceived == 0 { return .none }
        probe = nil
        probeAnswerBy = nil
        nextProbeAllowed = now + Self.probeSpacing
        guard answer != nil else { return .gone(.closed(path: path)) }
        defer { isUnresponsive = false }
        return isUnresponsive ? .answeringAgain : .none
    }
}
