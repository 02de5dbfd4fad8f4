import Logging

/// Every decision a ``FollowSession`` makes, with none of its I/O: an input
/// (a command, a daemon's lines, what a connect or the in-process engine
/// came to, the time) in; the updates to deliver and the effects to perform
/// out, in order.
///
/// The session's loop waits, reads and performs; what a result of an effect
/// means comes back here as another input. So every reconnection, refusal,
/// liveness verdict and fallback is decided here and tested without a
/// socket (`FollowStateTests`), with the clock given as each input's `now`.
///
/// An effect says what to make so, decided with what was known then: the
/// loop performs them in the order decided, and a later one supersedes an
/// earlier one (a `.stopEngine` after a `.startEngine`).
struct FollowState {
    typealias Key = DestinationTracker.Key
    typealias Update = FollowSession.Update
    typealias Configuration = FollowSession.Configuration

    let configuration: Configuration
    private var followed = FollowedDestinations()
    private(set) var phase = Phase.idle
    /// Whether the engine runs, as last decided.
    private(set) var engineRunning = false
    /// Which daemon to ask next and when, or, in-process, when to start
    /// netlink again.
    private var discovery: DaemonDiscovery
    /// What was delivered of the status, and how the next one is.
    private var stream: StatusStream
    private var failures = DaemonFailureLog()

    private var updates: [Update] = []
    private var effects: [Effect] = []

    init(_ configuration: Configuration) {
        self.configuration = configuration
        discovery = DaemonDiscovery(paths: configuration.socketPaths, backoff: configuration.backoff, first: nil)
        stream = StatusStream(detail: configuration.statusDetail)
    }

    /// A run starts at `now`: the daemon (or netlink) is tried at once, and
    /// the first source is news, whatever the last run followed.
    mutating func restart(at now: ContinuousClock.Instant) {
        phase = .idle
        closed()
        discovery.restart(at: now)
        stream.restart()
    }

    /// A run ended and its loop closed the daemon connection and stopped the
    /// engine: nothing of them is kept.
    mutating func closed() {
        if !phase.hasEnded { phase = .idle }
        engineRunning = false
        discovery.closed()
    }

    /// When the session must look again even if nothing is ready: a retry,
    /// or a first answer, due.
    var nextDeadline: ContinuousClock.Instant? {
        Deadline.earliest(discovery.due, phase.link?.firstAnswerBy)
    }

    /// What `input` at `now` changes: the updates to deliver, then the
    /// effects to perform, in order.
    mutating func step(_ input: Input, now: ContinuousClock.Instant) -> (updates: [Update], effects: [Effect]) {
        guard !phase.hasEnded else { return ([], []) }
        switch input {
        case .commands(let commands): carryOut(commands)
        case .tick: tick(now)
        case .connected(let path, let ownNetwork):
            phase = .connecting(DaemonLink(path: path, ownNetwork: ownNetwork, firstAnswerBy: now + DaemonConnection.answerTimeout))
            if discovery.connected() { effects.append(.unwatchSockets) }
        case .connectFailed(let path, let error): connectFailed(path, error, now)
        case .daemonReadable:
            switch phase {
            case .connecting, .answered: effects.append(.readDaemon)
            // It spoke again, on the subscription this time.
            case .unresponsive: resubscribe(now)
            case .idle, .ended: break
            }
        case .daemonLines(let lines):
            receive(lines, now)
        case .decoded(let status, let lines):
            switch status {
            case .success(let status):
                // Delivered already, whatever became of the daemon since.
                stream.passed(status)
                receive(lines, now)
            case .failure(let error):
                if phase.link != nil { daemonFailed(error, now) }
            }
        case .passedUndecoded(let update): stream.passed(update)
        case .daemonFailed(let error): if phase.link != nil { daemonFailed(error, now) }
        case .liveness(let verdict): heed(verdict, now)
        case .engineStarted(let lastStatus): engineStarted(lastStatus, now)
        case .engineFailed(let error): engineFailed(error, now)
        case .computed(let events): computed(events)
        case .socketsChanged: discovery.socketsChanged(now)
        case .socketsUnwatchable: discovery.watchFailed()
        }
        defer { (updates, effects) = ([], []) }
        return (updates, effects)
    }

    // MARK: Destinations

    private mutating func carryOut(_ commands: [FollowSession.Remote.Command]) {
        for command in commands where !phase.hasEnded {
            switch command {
            case .stop: end(nil)
            case .follow(let key): follow(key)
            case .unfollow(let key): unfollow(key)
            }
        }
    }

    private mutating func follow(_ key: Key) {
        guard let id = followed.add(key) else { return }
        if phase.link != nil { effects.append(.send([watch(key, id: id)])) }
        holdInProcess()
    }

    private mutating func unfollow(_ key: Key) {
        guard let entry = followed.remove(key) else { return }
        effects.append(.dropInProcess(key))
        // What the daemon refused, it does not hold.
        if entry.daemonHolds, phase.link != nil { effects.append(.send([ClientRequest(.unwatch, id: entry.wireID)])) }
        // An engine kept for what the daemon refused goes with the last of it.
        if phase.daemonAnswers, !followed.anyRefusedByDaemon { stopEngine() }
    }

    private func watch(_ key: Key, id: String) -> ClientRequest {
        ClientRequest(.watch, destination: key.destination, id: id, family: key.family)
    }

    /// Delivers a destination's answer unless it repeats the last one.
    private mutating func forward(_ key: Key, _ status: DestinationStatus, line: [UInt8]?) {
        if followed.deliver(status, for: key) { updates.append(.destination(key, status, line: line)) }
    }

    /// The daemon refused to watch `key` (over its limits, say): in-process
    /// from then on where the source allows, else no more.
    private mutating func watchRefused(_ key: Key, _ error: DaemonClientError) {
        reportFailure(error)
        switch configuration.source {
        case .automatic, .inProcess:
            followed.refusedByDaemon(key)
            startEngine()
        case .daemon:
            _ = followed.remove(key)
            updates.append(.destinationFailed(key, .noDaemonAnswered([error])))
        }
    }

    // MARK: The daemon

    private mutating func tick(_ now: ContinuousClock.Instant) {
        if case .connecting(let link) = phase, let due = link.firstAnswerBy, now >= due {
            daemonFailed(.timedOut(path: link.path, timeout: DaemonConnection.answerTimeout), now)
        }
        if !phase.hasEnded, discovery.takeDueAttempt(now) { attempt(now) }
    }

    /// The retry schedule says it is time: the daemon, else netlink again.
    private mutating func attempt(_ now: ContinuousClock.Instant) {
        switch configuration.source {
        case .inProcess:
            startEngine()
        case .automatic, .daemon:
            if phase.link == nil, let first = discovery.beginAttempt() {
                connect(first)
            } else if phase.link == nil, configuration.source == .daemon {
                // Every daemon is another network's (found in an earlier run):
                // nothing to wait for.
                end(.noDaemonAnswered([.otherNetwork(path: configuration.socketPaths.last ?? "")]))
            } else if !phase.daemonAnswers || followed.anyRefusedByDaemon {
                // The engine failed where it stands in for the daemon: again.
                startEngine()
            }
        }
    }

    /// Asks the daemon at `path` for the status (or, when only destinations
    /// are followed, one `get`) and every watch. The answer is awaited in
    /// the loop, so a stopped daemon holds up nothing.
    private mutating func connect(_ path: String) {
        let first = configuration.statusDetail.map { ClientRequest(.subscribe, detail: $0) } ?? ClientRequest(.get, detail: .summary)
        let watches = followed.daemonWatches.map { watch($0.key, id: $0.wireID) }
        effects.append(.connect(path: path, requests: [first] + watches))
    }

    /// The next socket, else the daemon failed.
    private mutating func connectFailed(_ path: String, _ error: DaemonClientError, _ now: ContinuousClock.Instant) {
        let (next, saidAlready) = discovery.connectFailed(path, error)
        guard let next else { return daemonFailed(error, now) }
        if !saidAlready { reportFailure(error) }
        connect(next)
    }

    /// What the liveness probe says about a daemon that has answered.
    private mutating func heed(_ verdict: DaemonLiveness.Verdict, _ now: ContinuousClock.Instant) {
        guard let link = phase.link else { return }
        switch verdict {
        case .none:
            break
        case .notAnswering(let error):
            // Only a daemon that answered is probed; one still connecting
            // has its first answer's deadline, which tick keeps.
            if case .connecting = phase { return }
            if configuration.daemonRequired {
                dropDaemon()
                return end(.noDaemonAnswered([error]))
            }
            // Kept open: its answer, or the subscription's next line, says
            // the daemon is back.
            phase = .unresponsive(link)
            reportFailure(error)
            startEngine()
        case .answeringAgain:
            resubscribe(now)
        case .gone(let error):
            daemonFailed(error, now)
        }
    }

    /// Lines from the daemon, in order, up to a status passed on undecoded:
    /// the rest wait for its decoding (`.decode`), since they are compared
    /// with it. Every line counts, statuses included: each status says what
    /// changed since the one before, so the newest alone would hide a
    /// handover in an older one read with it.
    private mutating func receive(_ lines: [[UInt8]], _ now: ContinuousClock.Instant) {
        for (index, line) in lines.enumerated() where phase.link != nil {
            if let news = receive(line, now) {
                effects.append(.decode(news, then: Array(lines[(index + 1)...])))
                return
            }
        }
    }

    /// One line from the daemon; a status passed on undecoded, if it is one.
    private mutating func receive(_ line: [UInt8], _ now: ContinuousClock.Instant) -> StatusUpdate? {
        guard let events = read(line) else { return nil }
        for event in events where phase.link != nil {
            switch event {
            case .news(let update):
                updates.append(.status(update))
                return update
            case .answered(let status, let line):
                daemonAnswered(now)
                deliverIfNews(status, line: line)
            case .status(let status, let line):
                deliverIfNews(status, line: line)
            case .destination(let id, let status, let line):
                // An id unwatched meanwhile names nothing.
                guard let key = followed.key(wireID: id) else { continue }
                forward(key, status, line: line)
            case .refused(let error, let code, let id):
                refused(error, code: code, id: id, now)
            case .failed(let error, let otherNetwork):
                if otherNetwork, let path = phase.link?.path { discovery.servesAnotherNetwork(path) }
                daemonFailed(error, now)
            }
        }
        return nil
    }

    /// What the link makes of `line`; `nil` without one.
    private mutating func read(_ line: [UInt8]) -> [DaemonLink.Event]? {
        guard var link = phase.link else { return nil }
        let events = link.read(line, passesThrough: stream.passesThrough(line))
        phase.holdRead(link)
        return events
    }

    private mutating func refused(_ error: DaemonClientError, code: String, id: String?, _ now: ContinuousClock.Instant) {
        guard let id, let key = followed.key(wireID: id) else {
            // About a destination unfollowed meanwhile (its unwatch, a
            // refusal already on its way): nothing is asked of it now.
            if let id, followed.wasIssued(id) { return }
            return daemonFailed(error, now)
        }
        switch code {
        case RequestError.tooManyWatches, RequestError.badDestination, RequestError.duplicateID:
            // Refused: the daemon holds no watch for it.
            watchRefused(key, error)
        default:
            // lookup_failed, or what a newer daemon says about it: the watch
            // is held, and the daemon's next evaluation answers it.
            reportFailure(error)
        }
    }

    /// The daemon's first answer: the next failure is news, and in-process
    /// can stop, but for what the daemon refused.
    private mutating func daemonAnswered(_ now: ContinuousClock.Instant) {
        discovery.answered(at: now)
        failures.daemonAnswered()
        announce(source: .daemon)
        if followed.anyRefusedByDaemon { holdInProcess() } else { stopEngine() }
    }

    /// The daemon failed: drop it, say so, retry on the schedule, and follow
    /// in-process meanwhile where the source allows.
    private mutating func daemonFailed(_ error: DaemonClientError, _ now: ContinuousClock.Instant) {
        let after = discovery.failed(error, now: now)
        dropDaemon()
        if configuration.daemonRequired { return end(.noDaemonAnswered([error])) }
        if case .protocolError(.versionMismatch) = error, configuration.source == .daemon {
            effects.append(.log(.error, error.description, [:]))
            return end(.noDaemonAnswered([error]))
        }
        // A daemon-only source with every daemon another network's has
        // nothing to wait for: it ends, as a `.daemon` source does when no daemon answers.
        if discovery.pathsToAsk.isEmpty, configuration.source == .daemon { return end(.noDaemonAnswered([error])) }
        // Asked again once the watch was set, or after netlink failed
        // in-process: still nothing, and said already.
        if after != .awaitTheWatch { reportFailure(error) }
        startEngine()
        switch after {
        case .watch(let paths):
            // No timer: the socket's appearing wakes the session. Asked once
            // more after the watch is set, for a socket made in between.
            effects.append(.watchSockets(paths))
            connect(paths[0])
        case .retry(let unwatch):
            if unwatch { effects.append(.unwatchSockets) }
        case .awaitTheWatch, .nothingToAsk:
            break
        }
    }

    /// A daemon that did not answer does again: a fresh subscription, whose
    /// first answers are its state now, compared with what in-process
    /// delivered meanwhile (which stops at that answer).
    private mutating func resubscribe(_ now: ContinuousClock.Instant) {
        dropDaemon()
        discovery.tryAgain(at: now)
    }

    private mutating func dropDaemon() {
        discovery.dropped()
        phase = .idle
        effects.append(.dropDaemon)
    }

    /// Passes on and logs a daemon failure, once: a refusing daemon costs
    /// one warning, not one per retry.
    private mutating func reportFailure(_ error: DaemonClientError) {
        updates.append(.problem(.noDaemonAnswered([error])))
        if let entry = failures.entry(for: error, source: configuration.source) {
            effects.append(.log(entry.level, entry.message, entry.metadata))
        }
    }

    // MARK: In-process

    /// Starts the engine where the source allows: the status, and every
    /// destination the daemon does not answer for.
    private mutating func startEngine() {
        guard configuration.source != .daemon else { return }
        engineRunning = true
        effects.append(.startEngine)
    }

    private mutating func stopEngine() {
        engineRunning = false
        effects.append(.stopEngine)
    }

    private mutating func engineStarted(_ lastStatus: NetworkStatus?, _ now: ContinuousClock.Instant) {
        // Stopped since it was started: nothing of it counts.
        guard engineRunning else { return }
        if !phase.daemonAnswers {
            announce(source: .inProcess)
            // Its status, the first or what it followed while the daemon
            // answered: a daemon that stopped answering missed the same changes.
            if let lastStatus { deliverIfNews(lastStatus, line: nil) }
        }
        holdInProcess()
    }

    /// Makes the engine hold every destination while no daemon answers, and
    /// only those the daemon refused while one does.
    private mutating func holdInProcess() {
        guard engineRunning else { return }
        effects.append(.holdInProcess(followed.ordered(followed.inProcess(daemonAnswers: phase.daemonAnswers))))
    }

    /// Delivers what the in-process half computed: its status while no
    /// daemon answers, its answers for the destinations it holds.
    private mutating func computed(_ events: [InProcessFollower.Event]) {
        guard engineRunning else { return }
        for event in events {
            switch event {
            case .status(let status): if !phase.daemonAnswers { deliverIfNews(status, line: nil) }
            case .destination(let key, let status): forward(key, status, line: nil)
            case .reopened(let error): updates.append(.problem(.inProcessFailed(error, daemonFailures: [])))
            }
        }
    }

    /// Netlink failed in-process: the end of a session that can't wait,
    /// else a problem passed on and logged, and netlink tried again after a
    /// while, in-process or with the daemon's next try.
    private mutating func engineFailed(_ error: NetlinkError, _ now: ContinuousClock.Instant) {
        stopEngine()
        guard configuration.retryingInProcess else { return end(.inProcessFailed(error, daemonFailures: [])) }
        updates.append(.problem(.inProcessFailed(error, daemonFailures: [])))
        effects.append(.log(.error, "in-process network monitor failed; retrying", ["error": "\(error)"]))
        discovery.scheduleUnlessDue(now)
    }

    // MARK: Delivering

    /// Delivers a status unless it repeats what was delivered (``StatusStream``).
    private mutating func deliverIfNews(_ status: NetworkStatus, line: [UInt8]?) {
        guard let detail = stream.detail else { return }
        // A daemon that predates summaries answers in full: reduced here.
        let offered: (status: NetworkStatus, line: [UInt8]?) = line.map { StatusUpdate.inDetail((status, $0), detail) } ?? (status, nil)
        if let update = stream.offer(offered.status, line: offered.line) { updates.append(.status(update)) }
    }

    /// Says where what follows comes from, when that changed.
    private mutating func announce(source: StatusSource) {
        if let update = stream.follow(source) { updates.append(update) }
    }

    private mutating func end(_ error: ReachabilityError?) {
        phase = .ended
        effects.append(.end(error))
    }
}
