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
    var path: String
    private let sentinel: NetlinkEventSocket
    private var probe: DaemonConnection?
    private var probeAnswerBy: ContinuousClock.Instant?
    private var nextProbeAllowed: ContinuousClock.Instant = .now
    /// A kernel change not yet probed for, waiting for the spacing.
    private var probePending = false
    /// The last probe got no answer in time.
    private(set) var isUnresponsive = false

    /// Made before the subscription's connection, so that a change the
    /// kernel reports between the daemon's first answer and now is heard too.
    init(path: String) throws(NetlinkError) {
        self.path = path
        sentinel = try NetlinkEventSocket(receiveBufferBytes: 64 * 1024)
    }

    /// Not while a probe that got no answer is kept open: its answer is what
    /// comes next. Without one (a connect that timed out on a full queue),
    /// the next kernel change sends another.
    var sentinelDescriptor: Int32 { isUnresponsive && probe != nil ? -1 : sentinel.fileDescriptor }
    var probeDescriptor: Int32 { probe?.fd ?? -1 }

    /// When ``check(now:)`` must run: a due probe, or an answer due.
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
    mutating func kernelChanged(now: ContinuousClock.Instant) -> Verdict {
        try? sentinel.discardQueued()
        guard probe == nil else { return .none }
        probePending = true
        return check(now: now)
    }

    /// Starts a due probe, or gives up on one not answered in time.
    mutating func check(now: ContinuousClock.Instant) -> Verdict {
        if let due = probeAnswerBy, now >= due {
            probeAnswerBy = nil
            isUnresponsive = true
            return .notAnswering(.timedOut(path: path, timeout: Self.answerTimeout))
        }
        guard probePending, probe == nil, now >= nextProbeAllowed else { return .none }
        probePending = false
        do throws(DaemonClientError) {
            probe = try DaemonConnection.asking(path: path, .get)
            probeAnswerBy = now + Self.answerTimeout
            return .none
        } catch {
            switch error {
            case .notRunning, .closed, .connectionFailed: return .gone(error)
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
    mutating func probeReadable(now: ContinuousClock.Instant) -> Verdict {
        guard let connection = probe else { return .none }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count < 0, errno == EAGAIN || errno == EINTR { return .none }
        connection.close()
        probe = nil
        probeAnswerBy = nil
        nextProbeAllowed = now + Self.probeSpacing
        guard count > 0 else { return .gone(.closed(path: path)) }
        defer { isUnresponsive = false }
        return isUnresponsive ? .answeringAgain : .none
    }

    func close() {
        probe?.close()
    }
}
