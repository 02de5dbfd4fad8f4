import Logging
import Reachability

/// The connectivity check, as a service of the daemon's loop: the checker
/// (which probes on threads of its own and wakes the loop through its pipe),
/// what it found going back to the engine as an input, and the clients that
/// asked for a check and wait for its answer.
///
/// Each waiter is answered when no probe is due, or at `answerBy` at the
/// latest: what statuses announce (`check.answer_within_ms`), since a path
/// that changes meanwhile starts a check of its own, which it would
/// otherwise wait for too.
final class ConnectivityService {
    private let checker: ConnectivityChecker
    private var waiters: [(client: ClientConnection, detail: StatusDetail, answerBy: ContinuousClock.Instant)] = []
    /// The gateways' neighbour entries; `nil` where the kernel refused the
    /// socket: the check runs on its schedule and on requests alone.
    private let gateways: GatewayNeighbourWatch?
    /// logind's word of a resume from suspend; `nil` without a system bus.
    private let sleep: SleepWatch?
    private let logger: Logger

    init(_ check: ConnectivityCheck, logger: Logger) throws {
        checker = try ConnectivityChecker(check: check, logger: logger)
        self.logger = logger
        do {
            gateways = try GatewayNeighbourWatch()
        } catch {
            logger.warning("cannot watch the gateways' neighbour entries; a dead gateway is noticed at the next probe",
                           metadata: ["error": "\(error)"])
            gateways = nil
        }
        sleep = SleepWatch(logger: logger)
    }

    /// What every status says of the check.
    var announced: DaemonCheck { DaemonCheck(url: checker.check.url, answerWithin: checker.answerWithin) }

    var nextDeadline: ContinuousClock.Instant? {
        Deadline.earliest(checker.nextDeadline, waiters.lazy.map(\.answerBy).min(), sleep?.nextDeadline)
    }

    func register(in poll: EventPoll<DaemonEventToken>) throws(SystemError) {
        try poll.add(checker.wake.fileDescriptor, .checker, interest: .readable)
        if let gateways { try poll.add(gateways.fileDescriptor, .neighbours, interest: .readable) }
    }

    /// Finished probes, those whose deadline passed (unanswered, whatever
    /// their thread still waits on), and what the kernel said of the
    /// gateways: the findings, when they changed.
    func collectFindings(
        probesFinished: Bool, neighboursChanged: Bool, _ now: ContinuousClock.Instant
    ) -> ConnectivityFindings? {
        let collected = probesFinished && checker.collect(now: now)
        let expired = checker.expireOverdueProbes(now: now)
        let failed = neighboursChanged && takeGatewayNews(now)
        awaitGatewayReturn()
        return collected || expired || failed ? checker.findings : nil
    }

    /// Lets the gateways' `REACHABLE` transitions through while one found
    /// dead waits for its return, and only then.
    private func awaitGatewayReturn() {
        do { try gateways?.awaitReturn(checker.awaitsGatewayReturn) } catch {
            logger.warning("cannot filter the gateways' neighbour entries", metadata: ["error": "\(error)"])
        }
    }

    /// The system bus was ready, or its deadline passed: a resume from
    /// suspend asks for a check, as a client's request would.
    func serveBus(ready: Bool, _ now: ContinuousClock.Instant) {
        guard let sleep, ready || sleep.isDue(now) else { return }
        if sleep.process(now) {
            // A host that wakes often (or a logind gone wrong) fills no log.
            let loud = resumeLogged.map { now - $0 >= Self.resumeLogSpacing } ?? true
            if loud { resumeLogged = now }
            logger.log(level: loud ? .info : .debug, "the host resumed from suspend: checking connectivity")
            checker.requestCheck(now: now)
        }
    }

    /// When a resume was last logged at info level.
    private var resumeLogged: ContinuousClock.Instant?
    private static let resumeLogSpacing = Duration.seconds(60)

    /// Once per pass: waits on the system bus for what sd-bus wants now.
    func updateBus(_ poll: EventPoll<DaemonEventToken>) {
        do { try sleep?.update(poll) } catch {
            logger.warning("cannot wait on the system bus", metadata: ["error": "\(error)"])
        }
    }

    /// Returns whether a gateway's failure changed a verdict.
    private func takeGatewayNews(_ now: ContinuousClock.Instant) -> Bool {
        guard let gateways else { return false }
        var changed = false
        do {
            for (family, state) in try gateways.take() {
                switch state {
                case .failed: changed = checker.gatewayFailed(family, now: now) || changed
                case .reachable: checker.gatewayAnswered(family, now: now)
                case .other: break
                }
            }
        } catch {
            logger.warning("cannot read the gateways' neighbour entries", metadata: ["error": "\(error)"])
        }
        return changed
    }

    /// The host's connections through `family`'s path fail: a probe decides.
    func connectionsFail(_ family: AddressFamily, _ now: ContinuousClock.Instant) {
        _ = checker.connectionsFail(family, now: now)
    }

    /// A connection through `family`'s path was answered: while it is
    /// `limited`, a hint of its return.
    func connectionAnswered(_ family: AddressFamily, _ now: ContinuousClock.Instant) {
        checker.connectionAnswered(family, now: now)
    }

    /// Whether answered connections are news (a family is `limited`).
    var awaitsAnswers: Bool { checker.awaitsAnswers }

    /// A published status: a new path is probed, and its gateway watched.
    func observe(_ status: NetworkStatus, _ now: ContinuousClock.Instant) {
        checker.observe(status, now: now)
        gateways?.follow(status)
        awaitGatewayReturn()
    }

    /// After the pass's status is published: starts the probes due (a path
    /// that just changed is probed at once), and takes the waiters to answer
    /// now: all when no probe is due, else those whose time is up.
    func startProbesAndTakeDueWaiters(_ now: ContinuousClock.Instant) -> [(client: ClientConnection, detail: StatusDetail)] {
        checker.startDueProbes(now: now)
        guard !waiters.isEmpty else { return [] }
        let all = !checker.isBusy(now: now)
        let isDue = { (waiter: (client: ClientConnection, detail: StatusDetail, answerBy: ContinuousClock.Instant)) in
            all || waiter.answerBy <= now
        }
        let due = waiters.filter(isDue)
        waiters.removeAll(where: isDue)
        for waiter in due { waiter.client.awaitsCheck = false }
        return due.map { ($0.client, $0.detail) }
    }

    /// A client asks for a check, which is answered with the status once a
    /// probe that started after the request has answered (the checker
    /// spaces requested probes by ``ConnectivityChecker/requestInterval``,
    /// whoever asks). Returns whether it waits; if not (no family online to
    /// probe), the status as it is answers it at once.
    func request(for client: ClientConnection, detail: StatusDetail, _ now: ContinuousClock.Instant) -> Bool {
        checker.requestCheck(now: now)
        checker.startDueProbes(now: now)
        guard checker.isBusy(now: now) else { return false }
        client.awaitsCheck = true
        waiters.append((client, detail, now + checker.answerWithin))
        return true
    }

    /// `client` left.
    func forget(_ client: ClientConnection) {
        if client.awaitsCheck { waiters.removeAll { $0.client === client } }
    }
}

extension ConnectivityService: DaemonService {
    func endPass(_ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) { updateBus(poll) }

    func observe(_ status: NetworkStatus, _ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) {
        observe(status, now)
    }
}
