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
struct FollowState: Equatable {
    typealias Update = FollowSession.Update
    typealias Configuration = FollowSession.Configuration

    let configuration: Configuration
    // Internal, not private, from here: the reducer's decisions are split
    // by concern over FollowState*.swift (destinations, in-process), and
    // only those files write them.
    var followed = FollowedDestinations()
    private(set) var phase = Phase.idle
    /// Whether the engine runs, as last decided.
    var engineRunning = false
    /// Which daemon to ask next and when, or, in-process, when to start
    /// netlink again.
    var discovery: DaemonDiscovery
    /// What was delivered of the status, and how the next one is.
    var stream: StatusStream
    var failures = DaemonFailureLog()

    var updates: [Update] = []
    var effects: [Effect] = []

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
    ///
    /// A `mutating get` that changes nothing: read in place. The session
    /// holds its state in a class, and a plain getter copied the whole state
    /// out of it first, every field retained and released (about 9 copies
    /// per change through the daemon, callgrind).
    var nextDeadline: ContinuousClock.Instant? {
        mutating get { Deadline.earliest(discovery.due, phase.firstAnswerBy) }
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
                if phase.hasLink { daemonFailed(error, now) }
            }
        case .passedUndecoded(let update): stream.passed(update)
        case .daemonFailed(let error): if phase.hasLink { daemonFailed(error, now) }
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
            if !phase.hasLink, let first = discovery.beginAttempt() {
                connect(first)
            } else if !phase.hasLink, configuration.source == .daemon {
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
    mutating func connect(_ path: String) {
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
        for (index, line) in lines.enumerated() where phase.hasLink {
            if let news = receive(line, now) {
                effects.append(.decode(news, then: Array(lines[(index + 1)...])))
                return
            }
        }
    }

    /// One line from the daemon; a status passed on undecoded, if it is one.
    private mutating func receive(_ line: [UInt8], _ now: ContinuousClock.Instant) -> StatusUpdate? {
        guard let events = read(line) else { return nil }
        for event in events where phase.hasLink {
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
    mutating func daemonFailed(_ error: DaemonClientError, _ now: ContinuousClock.Instant) {
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

    mutating func dropDaemon() {
        discovery.dropped()
        phase = .idle
        effects.append(.dropDaemon)
    }

    /// Passes on and logs a daemon failure, once: a refusing daemon costs
    /// one warning, not one per retry.
    mutating func reportFailure(_ error: DaemonClientError) {
        updates.append(.problem(.noDaemonAnswered([error])))
        if let entry = failures.entry(for: error, source: configuration.source) {
            effects.append(.log(entry.level, entry.message, entry.metadata))
        }
    }

    // MARK: Delivering

    /// Delivers a status unless it repeats what was delivered (``StatusStream``).
    mutating func deliverIfNews(_ status: NetworkStatus, line: [UInt8]?) {
        guard let detail = stream.detail else { return }
        // A daemon that predates summaries answers in full: reduced here.
        let inDetail: (status: NetworkStatus, line: [UInt8]?) = line.map { StatusUpdate.inDetail((status, $0), detail) } ?? (status, nil)
        if let update = stream.delivery(of: inDetail.status, line: inDetail.line) { updates.append(.status(update)) }
    }

    /// Says where what follows comes from, when that changed.
    mutating func announce(source: StatusSource) {
        if let update = stream.follow(source) { updates.append(update) }
    }

    mutating func end(_ error: ReachabilityError?) {
        phase = .ended
        effects.append(.end(error))
    }
}
