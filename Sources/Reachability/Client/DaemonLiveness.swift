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
/// something, the daemon is asked for a status on a connection of its own
/// (`get`, which every daemon answers) and must answer within
/// ``answerTimeout``. At most one probe per ``probeSpacing``: a route flood
/// costs the daemon two answers a second per client. A kernel change is
/// therefore noticed within spacing + timeout (1.5 s).
///
/// A probe that got no answer is kept open: a daemon that resumes answers it,
/// and that wakes the client, so a stopped daemon costs no polling either.
/// One per session, its sentinel kept across reconnections.
struct DaemonLiveness {
    static let probeSpacing: Duration = .milliseconds(500)
    static let answerTimeout: Duration = .seconds(1)

    enum Verdict {
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
    private var probeAnswerBy: ContinuousClock.Instant?
    private var nextProbeAllowed: ContinuousClock.Instant = .now
    /// A kernel change not yet probed for, waiting for the spacing.
    private var probePending = false
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
        probePending = false
        isUnresponsive = false
        nextProbeAllowed = .now
    }

    /// Not while a probe that got no answer is kept open: its answer is what
    /// comes next. Without one (a connect that timed out on a full queue),
    /// the next kernel change sends another.
    var sentinelDescriptor: Int32? { isUnresponsive && probe != nil ? nil : sentinel.fileDescriptor }
    var probeDescriptor: Int32? { probe?.fd }

    /// When ``verdict(probeReadable:kernelChanged:now:)`` must run even if
    /// nothing is ready: a due probe, or an answer due.
    var nextDeadline: ContinuousClock.Instant? {
        if let probeAnswerBy { return probeAnswerBy }
        return probePending ? nextProbeAllowed : nil
    }

    /// What the readable descriptors and the clock say, in the order that
    /// matters: the probe's answer, then a kernel change, then a due probe
    /// or an overdue answer.
    mutating func verdict(probeReadable: Bool, kernelChanged: Bool, now: ContinuousClock.Instant) -> Verdict {
        var verdict = probeReadable ? self.probeReadable(now: now) : .none
        if case .none = verdict, kernelChanged { verdict = self.kernelChanged(now: now) }
        if case .none = verdict { verdict = check(now: now) }
        return verdict
    }

    /// The sentinel is readable: the kernel reported something.
    private mutating func kernelChanged(now: ContinuousClock.Instant) -> Verdict {
        try? sentinel.discardQueued()
        guard probe == nil else { return .none }
        probePending = true
        return check(now: now)
    }

    /// Starts a due probe, or gives up on one not answered in time.
    private mutating func check(now: ContinuousClock.Instant) -> Verdict {
        if let due = probeAnswerBy, now >= due {
            probeAnswerBy = nil
            isUnresponsive = true
            return .notAnswering(.timedOut(path: path, timeout: Self.answerTimeout))
        }
        guard probePending, probe == nil, now >= nextProbeAllowed else { return .none }
        probePending = false
        do throws(DaemonClientError) {
            // A short connect: a full listen queue blocks it.
            let connection = try DaemonConnection(path: path, timeout: .milliseconds(100))
            try connection.send([.get])
            probe = connection
            probeAnswerBy = now + Self.answerTimeout
            return .none
        } catch {
            switch error {
            case .notRunning, .closed, .connectionFailed, .otherNetwork, .untrustedOwner: return .gone(error)
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
