import Logging
import Reachability
import Synchronization

/// The daemon's connectivity check: probes a family's path as soon as it
/// changes, again after ``ConnectivityCheck/interval`` while the answer is
/// `full` and sooner (from 5 s, doubling up to the interval) while it is not;
/// never while the family is not online by routes, so an offline host makes
/// no probes and no system calls. Owned by the event loop; probes run on
/// threads of their own and report through ``wake``, which the loop polls.
///
/// Downstream of the watcher: it consumes the paths of each published status
/// (``observe(_:now:)``), and its ``findings`` go back to the watcher as an
/// input, tied to the paths they were made on.
final class ConnectivityChecker {
    /// The first retry after a result other than `full`; it doubles up to the interval.
    static let firstRetry: Duration = .seconds(5)
    /// How soon a probe that got no answer is confirmed by a second one, before
    /// `limited` is believed: one dropped connection must not tell every client
    /// that a working network has no Internet. Both probes, and this pause,
    /// fit in the check's timeout: see ``startDueProbes(now:)``.
    static let confirmation: Duration = .milliseconds(500)
    /// How often clients together may make a family be probed: a request
    /// within this of the family's last probe waits for the next one, due
    /// this long after the last began. Kept here, once for the daemon, not
    /// per connection: a user who connects anew for every request must not
    /// make the daemon flood the check server (by default someone else's).
    static let requestInterval: Duration = .seconds(5)

    private struct FamilyState {
        /// The path being checked; `nil` while the family is not online.
        var path: NetworkPath?
        /// The verdict for `path`; `nil` until its first probe answers.
        var verdict: ConnectivityVerdict?
        var nextProbe: ContinuousClock.Instant?
        /// The probe under way; a result for another one is stale.
        var probeInFlight: Int?
        /// Verdicts other than `full` in a row, for the backoff.
        var misses = 0
        /// A probe got no answer; a second one, due soon, decides.
        var confirming = false
        /// When the last probe of `path` started, for ``requestInterval``.
        var lastProbe: ContinuousClock.Instant?
        /// A client asked for a probe that has not started yet: the clients
        /// waiting for one are answered once it has.
        var requested = false
        /// When the probe under way counts as unanswered, whatever its thread
        /// is doing: the C library's resolver has no deadline of its own.
        var probeDeadline: ContinuousClock.Instant?
        /// When the check under way (a probe, and the confirmation of a
        /// failure) must have its verdict: its timeout from its first probe.
        var checkDeadline: ContinuousClock.Instant?
        /// The kernel found the gateway dead (``gatewayFailed(_:now:)``),
        /// and no probe has found the path working since: its return is news.
        var gatewayDead = false
        /// The host's connections through the path fail
        /// (``connectionsFail(_:now:)``): the probe asked for is believed
        /// without a confirmation, which they already are.
        var suspected = false
        /// The path is `limited` and an answered connection through it
        /// would start a probe (``connectionAnswered(_:now:)``): set by each
        /// verdict of `limited` but one such a hint asked for, so that hints
        /// never probe more often than the schedule.
        var awaitsAnswer = false
        /// The probe due was asked for by an answered connection.
        var hinted = false
    }

    let check: ConnectivityCheck
    private let logger: Logger
    /// Readable when a probe has finished: poll it, then call ``collect(now:)``.
    let wake: WakeSignal
    private var families: [AddressFamily: FamilyState] = [.ipv4: FamilyState(), .ipv6: FamilyState()]
    /// Per family, the check server's address that last gave the expected
    /// answer, kept across paths (a handover to a VPN reaches the same
    /// server): asked when the name does not resolve.
    private var kept: [AddressFamily: CheckServerAddress] = [:]
    /// Where probe threads leave their results.
    private final class Mailbox: Sendable {
        let results = Mutex<[(probe: Int, family: AddressFamily, report: ProbeReport)]>([])
    }

    private let finished = Mailbox()
    private var nextProbeID = 0
    /// One probe, run on a thread of its own, answering by the deadline
    /// where it can: ``HTTPProbe/run(_:family:interface:kept:deadline:)`` but
    /// in tests of the schedule. Its arguments: the check, the family, the
    /// interface, the kept address and the deadline.
    typealias Probe = @Sendable (ConnectivityCheck, AddressFamily, String, CheckServerAddress?, ContinuousClock.Instant)
        -> ProbeReport
    private let probe: Probe

    init(check: ConnectivityCheck, logger: Logger, probe: @escaping Probe = HTTPProbe.run) throws {
        self.check = check
        self.logger = logger
        self.probe = probe
        wake = try WakeSignal()
    }

    /// Takes note of a published status's paths: a changed path drops its old
    /// verdict and is due for a probe at once.
    func observe(_ status: NetworkStatus, now: ContinuousClock.Instant) {
        for (family, state) in [(AddressFamily.ipv4, status.ipv4), (.ipv6, status.ipv6)] where families[family]?.path != state.path {
            families[family] = FamilyState(path: state.path, nextProbe: state.path == nil ? nil : now)
        }
    }

    /// The verdicts so far, each for the path it was made on.
    var findings: ConnectivityFindings {
        func finding(_ family: AddressFamily) -> ConnectivityFindings.Finding? {
            guard let state = families[family], let path = state.path, let verdict = state.verdict else { return nil }
            return .init(
                path: path, connectivity: verdict.connectivity, portalURL: verdict.portalURL, namesFail: verdict.namesFail,
                reason: verdict.reason)
        }
        return ConnectivityFindings(ipv4: finding(.ipv4), ipv6: finding(.ipv6))
    }

    /// When a probe is next due, or one under way is overdue, for the
    /// loop's poll timeout.
    var nextDeadline: ContinuousClock.Instant? {
        families.values.compactMap { $0.probeInFlight == nil ? $0.nextProbe : $0.probeDeadline }.min()
    }

    /// How soon a `check` request is answered at the latest: a probe under
    /// way (or the last one) holds the requested one back by
    /// ``requestInterval`` or until its check ends, whichever is later, and
    /// the requested check takes its timeout.
    var answerWithin: Duration { max(Self.requestInterval, check.timeout) + check.timeout }

    /// Whether a probe is under way: its answer will wake the loop.
    var isProbing: Bool { families.values.contains { $0.probeInFlight != nil } }

    /// Whether a probe is under way, due now, asked for, or confirming a
    /// failure: a `reachd check` waits for each.
    func isBusy(now: ContinuousClock.Instant) -> Bool {
        families.values.contains {
            $0.probeInFlight != nil || $0.confirming
                || ($0.path != nil && ($0.requested || ($0.nextProbe.map { $0 <= now } ?? false)))
        }
    }

    /// A client asked for a check (`reachd check`, after signing in to a
    /// portal): every online family is probed by a probe that starts after
    /// the request, now, or ``requestInterval`` after the family's last
    /// probe began (one under way included). Whoever asks, and however often,
    /// a family is probed at most once per ``requestInterval`` on request;
    /// the requests meanwhile wait for the same probe.
    func requestCheck(now: ContinuousClock.Instant, families asked: [AddressFamily] = [.ipv4, .ipv6]) {
        for family in asked {
            guard let state = families[family], state.path != nil else { continue }
            let allowed = state.lastProbe.map { max(now, $0 + Self.requestInterval) } ?? now
            families[family]?.nextProbe = min(state.nextProbe ?? allowed, allowed)
            families[family]?.requested = true
        }
    }

    /// The kernel found `family`'s gateway dead: its neighbour entry turned
    /// `FAILED`, the kernel's own probes unanswered. That is the
    /// confirmation: the family is `limited` at once, and retried from 5 s
    /// (sooner when the gateway answers again, ``gatewayAnswered(_:now:)``).
    /// A probe under way started before it: its answer is stale. Returns
    /// whether the verdict changed.
    func gatewayFailed(_ family: AddressFamily, now: ContinuousClock.Instant) -> Bool {
        // A family the check cannot ask (no address of it) has no verdict
        // to lose, and a probe would find nothing to ask again.
        guard var state = families[family], state.path != nil, !state.gatewayDead,
            state.verdict?.connectivity != Connectivity.none
        else { return false }
        // Limited already (a probe found it so): its schedule stands, and
        // the gateway's return is news all the same.
        guard state.verdict?.connectivity != .limited else {
            families[family]?.gatewayDead = true
            return false
        }
        logger.info("connectivity check", metadata: [
            "check.family": "\(family)", "check.answer": "the gateway stopped answering address resolution",
            "check.verdict": "limited",
        ])
        state.verdict = ConnectivityVerdict(connectivity: .limited, reason: .gatewayUnanswered)
        state.gatewayDead = true
        state.awaitsAnswer = true
        state.misses += 1
        state.confirming = false
        state.probeInFlight = nil
        state.probeDeadline = nil
        state.checkDeadline = nil
        state.nextProbe = now + Self.firstRetry
        families[family] = state
        return true
    }

    /// `family`'s gateway answers again (its entry turned `REACHABLE` after
    /// ``gatewayFailed(_:now:)``, no probe since): probed as a client's
    /// request would have it, now or ``requestInterval`` after the last
    /// probe. A family `limited` for any other reason is left to its schedule.
    func gatewayAnswered(_ family: AddressFamily, now: ContinuousClock.Instant) {
        guard families[family]?.gatewayDead == true else { return }
        logger.info("connectivity check", metadata: [
            "check.family": "\(family)", "check.answer": "the gateway answers address resolution again",
            "check.verdict": "probing",
        ])
        families[family]?.gatewayDead = false
        requestCheck(now: now, families: [family])
    }

    /// Whether a family's gateway was found dead and no probe has found
    /// the path working since: the gateways' `REACHABLE` transitions are news.
    var awaitsGatewayReturn: Bool { families.values.contains { $0.gatewayDead } }

    /// The host's connections through `family`'s path fail
    /// (``ConnectionEvidence``): a probe, now or ``requestInterval`` after
    /// the last, decides, and its failure needs no confirmation. A family
    /// `limited` already, or with a check under way, is left as it is.
    /// Returns whether a probe was asked for.
    func connectionsFail(_ family: AddressFamily, now: ContinuousClock.Instant) -> Bool {
        guard let state = families[family], state.path != nil, state.verdict?.connectivity != .limited,
            state.verdict?.connectivity != Connectivity.none, state.probeInFlight == nil, !state.confirming, !state.suspected
        else { return false }
        logger.info("connectivity check", metadata: [
            "check.family": "\(family)", "check.answer": "connections through this path fail",
            "check.verdict": "probing",
        ])
        families[family]?.suspected = true
        requestCheck(now: now, families: [family])
        return true
    }

    /// A connection through `family`'s path was answered while it is
    /// `limited`: probed as a client's request would have it, once per
    /// verdict of the schedule's (``FamilyState/awaitsAnswer``).
    func connectionAnswered(_ family: AddressFamily, now: ContinuousClock.Instant) {
        guard families[family]?.awaitsAnswer == true, families[family]?.verdict?.connectivity == .limited else { return }
        logger.info("connectivity check", metadata: [
            "check.family": "\(family)", "check.answer": "a connection through this path was answered",
            "check.verdict": "probing",
        ])
        families[family]?.awaitsAnswer = false
        families[family]?.hinted = true
        requestCheck(now: now, families: [family])
    }

    /// Whether answered connections are news: a family is `limited`, and
    /// its return would start a probe.
    var awaitsAnswers: Bool { families.values.contains { $0.awaitsAnswer && $0.verdict?.connectivity == .limited } }

    /// The pause before a confirming probe: ``confirmation``, or a fifth of
    /// a timeout too short for it.
    private var confirmationPause: Duration { min(Self.confirmation, check.timeout / 5) }

    /// Starts the probes that are due. A check's verdict comes within its
    /// timeout, the confirmation of a failure included: a first probe that
    /// a confirmation may follow has half of what the pause before it
    /// leaves, and the confirmation the rest; any other, the whole timeout.
    func startDueProbes(now: ContinuousClock.Instant) {
        for family in [AddressFamily.ipv4, .ipv6] {
            guard let state = families[family], let path = state.path, state.probeInFlight == nil,
                let due = state.nextProbe, due <= now
            else { continue }
            nextProbeID += 1
            let checkDeadline = state.confirming ? state.checkDeadline ?? now + check.timeout : now + check.timeout
            // A failure is confirmed only where the verdict was not limited
            // already: a probe no confirmation can follow has the whole timeout.
            let confirmable = !state.confirming && state.verdict?.connectivity != .limited && !state.suspected
            let deadline = confirmable ? now + (check.timeout - confirmationPause) / 2 : checkDeadline
            let (id, check, finished, wake, probe, kept) = (nextProbeID, check, finished, wake, probe, kept[family])
            families[family]?.probeInFlight = id
            families[family]?.probeDeadline = deadline
            families[family]?.checkDeadline = checkDeadline
            families[family]?.nextProbe = nil
            families[family]?.lastProbe = now
            families[family]?.requested = false
            // A probe given up on at its deadline keeps its thread until the
            // resolver's own timeout (glibc's: 5 s a try), its answer then
            // dropped: a few threads at most, at the spacing of the probes.
            startDetachedThread {
                let report = probe(check, family, path.interface, kept, deadline)
                finished.results.withLock { $0.append((id, family, report)) }
                wake.signal()
            }
        }
    }

    /// Probes finished and not yet taken in by ``collect(now:)``: what a
    /// test of a late answer waits for, as the wake signal is one for all.
    var finishedProbes: Int { finished.results.withLock { $0.count } }

    /// Takes in finished probes; returns whether a verdict changed.
    func collect(now: ContinuousClock.Instant) -> Bool {
        wake.drain()
        let results = finished.results.withLock { results in
            defer { results.removeAll() }
            return results
        }
        var changed = false
        for (probe, family, report) in results {
            // Stale: the path changed (or went) while it ran, or its deadline passed.
            guard families[family]?.probeInFlight == probe else { continue }
            changed = judge(report, family: family, now: now) || changed
        }
        return changed
    }

    /// Judges each probe past its deadline as unanswered, whatever its
    /// thread is still doing (waiting on a resolver that hangs, say);
    /// returns whether a verdict changed.
    func expireOverdueProbes(now: ContinuousClock.Instant) -> Bool {
        var changed = false
        for family in [AddressFamily.ipv4, .ipv6] {
            guard let state = families[family], state.probeInFlight != nil, let deadline = state.probeDeadline, deadline <= now
            else { continue }
            changed = judge(ProbeReport(.failed(.timeout)), family: family, now: now) || changed
        }
        return changed
    }

    /// A probe's report for `family`'s path; returns whether its verdict changed.
    private func judge(_ report: ProbeReport, family: AddressFamily, now: ContinuousClock.Instant) -> Bool {
        guard var state = families[family] else { return false }
        var verdict = ConnectivityVerdict.judge(report.outcome, expecting: check.expectation, asked: check.url)
        if report.nameFailed {
            // Names fail only where the kept address gave the expected answer;
            // anything else there (a portal's page, an error) is no Internet.
            verdict = verdict.connectivity == .full
                ? ConnectivityVerdict(connectivity: .full, reason: .expectedAnswer, namesFail: true)
                : ConnectivityVerdict(connectivity: .limited, reason: .nameUnresolved)
        } else if verdict.connectivity == .full, let address = report.answeredAt {
            kept[family] = address
        }
        // Worse news than the last verdict is confirmed before it is believed:
        // one lost query or connection must not call a working network broken.
        // From `limited`, failing names are better news, believed at once.
        let unconfirmed = !state.confirming && state.verdict?.connectivity != .limited && !state.suspected
            && (verdict.connectivity == .limited || (verdict.namesFail && state.verdict?.namesFail != true))
        let answer: String = switch report.outcome {
        case .answered(let response): (report.nameFailed ? "the name did not resolve; at the kept address, " : "")
            + "HTTP \(response.status)"
        case .failed(let failure): failure.rawValue
        case .noAddress: "the check host has no address of this family"
        }
        // Info only for a verdict that changes what is published.
        logger.log(
            level: unconfirmed || state.verdict == verdict ? .debug : .info, "connectivity check",
            metadata: ["check.family": "\(family)", "check.answer": "\(answer)",
                       "check.verdict": "\(unconfirmed ? "confirming" : verdict.connectivity.rawValue)",
                       "check.names": "\(verdict.namesFail ? "failing" : report.outcome == .failed(.dns) ? "unresolved" : "resolved")"])
        state.probeInFlight = nil
        state.probeDeadline = nil
        if unconfirmed {
            state.confirming = true
            state.nextProbe = now + confirmationPause
            families[family] = state
            return false
        }
        state.confirming = false
        state.checkDeadline = nil
        // The connections' failures and the probe's agree: theirs is the why.
        if state.suspected && verdict.connectivity == .limited { verdict.reason = .connectionsFail }
        state.suspected = false
        // Found dead, the gateway's return stays news until a probe finds
        // the path working, however long that takes.
        if verdict.connectivity != .limited { state.gatewayDead = false }
        state.awaitsAnswer = verdict.connectivity == .limited && !state.hinted
        state.hinted = false
        let changed = state.verdict != verdict
        state.verdict = verdict
        // Nothing to ask (no address of the family) is asked again at the
        // interval, as a working path is: the host may gain one.
        let settled = (verdict.connectivity == .full && !verdict.namesFail) || verdict.connectivity == .none
        state.misses = settled ? 0 : state.misses + 1
        // A `reachd check` that came while it ran has its probe due
        // already: the user may just have signed in.
        if state.nextProbe == nil { state.nextProbe = now + delay(afterMisses: state.misses) }
        families[family] = state
        return changed
    }

    private func delay(afterMisses misses: Int) -> Duration {
        guard misses > 0 else { return check.interval }
        return Backoff(initial: Self.firstRetry, maximum: check.interval).delay(attempt: misses - 1)
    }
}
