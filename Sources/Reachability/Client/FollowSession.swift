#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization

/// The one loop behind every client that follows the network: the status
/// and any number of destinations, from the daemon while one answers, else
/// computed in-process, as the source allows.
///
/// It owns, on the thread that runs it:
/// - one daemon connection, carrying the status subscription (or, when only
///   destinations are followed, one `get`) and one `watch` per destination,
///   its lines read by a ``DaemonLink``;
/// - one liveness sentinel (``DaemonLiveness``) that notices a daemon that
///   stopped answering when the kernel reports something it should publish;
/// - one retry schedule, for the daemon and for restarting netlink alike;
/// - while no daemon answers, its in-process half (``InProcessFollower``):
///   the daemon's own composition of watcher and tracker, so the answers are
///   the daemon's.
///
/// What it delivers is decided by values with no I/O: ``StatusStream`` (the
/// status), ``FollowedDestinations`` (the destinations) and
/// ``DaemonFailureLog`` (what it logs); the loop performs the rest.
///
/// It waits in one `poll` (``PollSet``) with a timeout only while a retry, a
/// first answer, a liveness probe or a name's resolution is due: a client
/// following a quiet network makes no system calls. Destinations are added
/// and removed while it runs, through its ``Remote``; a reconnection sends
/// the watches again, and answers that repeat what was delivered are
/// dropped, per destination.
///
/// ``ReachabilityMonitor`` runs one on a thread of its own; `reachd monitor`,
/// `reach --watch` and `wait-online` run one on their main thread, so an
/// answer reaches stdout with no hop between threads.
package final class FollowSession {
    package typealias Key = DestinationTracker.Key

    /// What a session follows, and where from.
    package struct Configuration: Sendable {
        package var source: ReachabilityMonitor.Source
        /// Daemon sockets to try, in order.
        package var socketPaths: [String]
        /// How much of each status to deliver: with `.summary`, statuses
        /// without the interface list, and only when the summary changed.
        /// `nil`: no statuses, only destinations.
        package var statusDetail: StatusDetail?
        package var backoff = ReachabilityMonitor.Backoff()
        /// Throw a daemon's failure rather than retry: before its first
        /// answer, and when it goes away or stops answering later. What a
        /// socket the user named needs: the command says so and exits,
        /// rather than show a status nobody keeps current.
        package var daemonRequired = false
        /// Retry netlink in-process when it fails; `false` throws the
        /// failure instead: what one answer, which cannot wait, needs.
        package var retryingInProcess = true
        /// Handed every netlink datagram the in-process engine reads.
        package var traceDatagrams: (@Sendable ([UInt8]) -> Void)?

        package init(
            source: ReachabilityMonitor.Source, socketPaths: [String], statusDetail: StatusDetail?,
            backoff: ReachabilityMonitor.Backoff = .init(), daemonRequired: Bool = false
        ) {
            self.source = source
            self.socketPaths = socketPaths
            self.statusDetail = statusDetail
            self.backoff = backoff
            self.daemonRequired = daemonRequired
        }
    }

    /// What a session delivers, in order.
    package enum Update {
        /// What follows comes from the daemon (it answered) or is computed
        /// in-process (no daemon answers): said once per switch, before
        /// anything from the new source.
        case following(StatusSource)
        /// The status changed (or its source did).
        case status(StatusUpdate)
        /// A destination's answer changed (or its source did). A line when it
        /// came from a daemon.
        case destination(Key, DestinationStatus, line: [UInt8]?)
        /// The daemon will not answer for this destination (it refused the
        /// watch) and the source allows nothing else: it is no longer followed.
        case destinationFailed(Key, ReachabilityError)
        /// A failure met and worked around: the daemon went away or stopped
        /// answering, netlink failed in-process. Once per failure.
        case problem(ReachabilityError)
    }

    /// What any thread may ask of a running session; it wakes the session.
    package final class Remote: Sendable {
        enum Command {
            case follow(Key)
            case unfollow(Key)
            case stop
        }

        let wake: WakeSignal
        private let commands = Mutex<[Command]>([])

        package init() throws(SystemError) {
            wake = try WakeSignal()
        }

        /// Starts following `key`: its answer, then one per change.
        package func follow(_ key: Key) { send(.follow(key)) }
        /// Stops following `key`: nothing more is delivered for it.
        package func unfollow(_ key: Key) { send(.unfollow(key)) }
        /// Ends ``FollowSession/run(until:deliver:)``.
        package func stop() { send(.stop) }

        private func send(_ command: Command) {
            commands.withLock { $0.append(command) }
            wake.signal()
        }

        func takeCommands() -> [Command] {
            commands.withLock { commands in
                defer { commands.removeAll() }
                return commands
            }
        }
    }

    package let remote: Remote
    private let configuration: Configuration
    private let logger: Logger

    private var followed = FollowedDestinations()

    /// The daemon connection being followed or tried.
    private var daemon: (connection: DaemonConnection, link: DaemonLink)?
    /// Daemons found to serve another network namespace: not asked again.
    /// A retry has nothing to try once every socket is one of these.
    private var otherNetworks: Set<String> = []
    /// Made at the first try of a daemon, kept for the session's life.
    private var liveness: DaemonLiveness?
    private let inProcess: InProcessFollower
    /// When to try the daemon again or, in-process, to start netlink again.
    private var retry: RetrySchedule
    /// What was delivered of the status, and how the next one is.
    private var stream: StatusStream
    private var failures = DaemonFailureLog()
    private var deliver: ((Update) -> Bool)?

    /// Why the loop ends.
    private enum Ending: Error {
        /// Told to stop, or the caller had enough.
        case stopped
        case failed(ReachabilityError)
    }

    private enum Token {
        case commands, daemon, sentinel, probe
        case engine(NetworkEngine.Input)
    }

    package init(_ configuration: Configuration, remote: Remote, logger: Logger) {
        self.configuration = configuration
        self.remote = remote
        self.logger = logger
        retry = RetrySchedule(configuration.backoff)
        stream = StatusStream(detail: configuration.statusDetail)
        inProcess = InProcessFollower(logger: logger, traceDatagrams: configuration.traceDatagrams)
    }

    package convenience init(_ configuration: Configuration, logger: Logger) throws(ReachabilityError) {
        do { self.init(configuration, remote: try Remote(), logger: logger) } catch { throw .waitFailed(error) }
    }

    /// Follows on the calling thread, calling `deliver` with each update
    /// until it returns `false`, `deadline` passes or ``Remote/stop()`` is
    /// called. Throws only what ends it for good: a daemon of another protocol
    /// version to a `.daemon` session, any daemon failure when
    /// ``Configuration/daemonRequired``, or a failure of `poll`.
    package func run(until deadline: ContinuousClock.Instant? = nil, deliver: (Update) -> Bool) throws(ReachabilityError) {
        var ending: Ending?
        withoutActuallyEscaping(deliver) { deliver in
            self.deliver = deliver
            retry = RetrySchedule(configuration.backoff)
            stream.restart()
            defer {
                dropDaemon()
                stopEngine()
                self.deliver = nil
            }
            do throws(Ending) { try loop(until: deadline) } catch { ending = error }
        }
        if case .failed(let error) = ending { throw error }
    }

    private func loop(until deadline: ContinuousClock.Instant?) throws(Ending) {
        // Commands sent before the run are waiting already.
        var signalled = true
        while true {
            let now = ContinuousClock.now
            if let deadline, now >= deadline { return }
            if signalled { remote.wake.drain() }
            try obey(remote.takeCommands(), now)
            if retry.takeIfDue(now) { try attempt(now) }

            var descriptors = PollSet<Token>()
            descriptors.add(remote.wake.fileDescriptor, .commands)
            if let daemon {
                descriptors.add(daemon.connection.fd, .daemon)
                // Heard once the daemon has answered; what it heard before
                // then is queued, and probed for at once.
                if daemon.link.hasAnswered { descriptors.add(liveness?.sentinelDescriptor, .sentinel) }
                descriptors.add(liveness?.probeDescriptor, .probe)
            }
            for (input, fd) in inProcess.descriptors { descriptors.add(fd, .engine(input)) }
            let wake = Deadline.earliest(
                deadline, retry.due, daemon?.link.firstAnswerBy, daemon == nil ? nil : liveness?.nextDeadline,
                inProcess.nextDeadline)
            let events: [ReadinessEvent<Token>]
            do { events = try descriptors.wait(until: wake) } catch { throw .failed(.waitFailed(error)) }
            signalled = false
            var (daemonReady, kernelChanged, probeReady) = (false, false, false)
            var engineReady: [NetworkEngine.Input] = []
            for event in events {
                switch event.token {
                case .commands: signalled = true
                case .daemon: daemonReady = true
                case .sentinel: kernelChanged = true
                case .probe: probeReady = true
                case .engine(let input): engineReady.append(input)
                }
            }
            let later = ContinuousClock.now
            // Each step that changes which daemon is followed starts a new
            // pass: what is still ready is reported again.
            if try checkLiveness(kernelChanged: kernelChanged, probeReadable: probeReady, later) { continue }
            if try serviceDaemon(readable: daemonReady, later) { continue }
            for input in engineReady { try serviceEngine(input, later) }
            try evaluateInProcess(later)
        }
    }

    // MARK: Destinations

    private func obey(_ commands: [Remote.Command], _ now: ContinuousClock.Instant) throws(Ending) {
        for command in commands {
            switch command {
            case .stop: throw .stopped
            case .follow(let key): try follow(key, now)
            case .unfollow(let key): try unfollow(key, now)
            }
        }
    }

    private func follow(_ key: Key, _ now: ContinuousClock.Instant) throws(Ending) {
        guard let id = followed.add(key) else { return }
        if let link = daemon {
            do throws(DaemonClientError) { try link.connection.send([watch(key, id: id)]) } catch {
                try daemonFailed(error, now)
                return
            }
        }
        try syncEngineKeys(now)
    }

    private func unfollow(_ key: Key, _ now: ContinuousClock.Instant) throws(Ending) {
        guard let entry = followed.remove(key) else { return }
        inProcess.drop(key)
        // What the daemon refused, it does not hold.
        if entry.daemonHolds, let link = daemon {
            do throws(DaemonClientError) { try link.connection.send([ClientRequest(.unwatch, id: entry.wireID)]) } catch {
                // Half a request may be written: the connection is no good.
                try daemonFailed(error, now)
                return
            }
        }
        // An engine kept for what the daemon refused goes with the last of it.
        if daemonAnswers, !followed.anyRefusedByDaemon { stopEngine() }
    }

    private func watch(_ key: Key, id: String) -> ClientRequest {
        ClientRequest(.watch, destination: key.destination, id: id, family: key.family)
    }

    /// Delivers a destination's answer unless it repeats the last one.
    private func forward(_ key: Key, _ status: DestinationStatus, line: [UInt8]?) throws(Ending) {
        if followed.deliver(status, for: key) { try pass(.destination(key, status, line: line)) }
    }

    /// The daemon refused to watch `key` (over its limits, say): in-process
    /// from then on where the source allows, else no more.
    private func watchRefused(_ key: Key, _ error: DaemonClientError, _ now: ContinuousClock.Instant) throws(Ending) {
        try note(error)
        switch configuration.source {
        case .automatic, .embedded:
            followed.refusedByDaemon(key)
            try startEngine(now)
        case .daemon:
            _ = followed.remove(key)
            try pass(.destinationFailed(key, .noDaemonAnswered([error])))
        }
    }

    // MARK: The daemon

    /// Whether the daemon answers for the session now: it has, and has not
    /// stopped answering since.
    private var daemonAnswers: Bool {
        guard let daemon else { return false }
        return daemon.link.hasAnswered && liveness?.isUnresponsive != true
    }

    /// The retry schedule says it is time: the daemon, else netlink again.
    private func attempt(_ now: ContinuousClock.Instant) throws(Ending) {
        switch configuration.source {
        case .embedded:
            try startEngine(now)
            if !inProcess.isRunning { retry.failed(now: now) }
        case .automatic, .daemon:
            if daemon == nil {
                do throws(DaemonClientError) { daemon = try connect(now) } catch { try daemonFailed(error, now) }
            } else if !inProcess.isRunning, followed.anyRefusedByDaemon {
                // The engine for what the daemon refused failed: again.
                try startEngine(now)
                if !inProcess.isRunning { retry.failed(now: now) }
            }
        }
    }

    /// The first of the sockets that takes the requests. The answer is
    /// awaited in the loop, so a stopped daemon holds up nothing: the connect
    /// may block only briefly (a full listen queue).
    private func connect(_ now: ContinuousClock.Instant) throws(DaemonClientError)
        -> (connection: DaemonConnection, link: DaemonLink)
    {
        let first = configuration.statusDetail.map { ClientRequest(.subscribe, detail: $0) } ?? ClientRequest(.get, detail: .summary)
        let watches = followed.daemonWatches.map { watch($0.key, id: $0.wireID) }
        var lastError: DaemonClientError?
        for path in configuration.socketPaths where !otherNetworks.contains(path) {
            do throws(DaemonClientError) {
                let connection = try DaemonConnection(path: path, timeout: .milliseconds(100))
                // Listening before the daemon reads the request, so before it
                // answers (see DaemonLiveness.listen(to:)); made with the first
                // daemon that accepts, not while none runs. Without netlink, a
                // stopped daemon goes unnoticed once it has answered.
                if liveness == nil { liveness = try? DaemonLiveness() }
                liveness?.listen(to: path)
                try connection.send([first] + watches)
                let link = DaemonLink(
                    firstAnswerBy: now + DaemonConnection.answerTimeout,
                    checkServesThisNetwork: connection.checkServesThisNetwork)
                return (connection, link)
            } catch {
                if path != configuration.socketPaths.last { try? note(error) }
                lastError = error
            }
        }
        throw lastError ?? .otherNetwork(path: configuration.socketPaths.last ?? "")
    }

    /// What the liveness probe says about a daemon that has answered.
    /// Returns whether the daemon followed changed.
    private func checkLiveness(kernelChanged: Bool, probeReadable: Bool, _ now: ContinuousClock.Instant) throws(Ending)
        -> Bool
    {
        guard daemon != nil, let verdict = liveness?.verdict(probeReadable: probeReadable, kernelChanged: kernelChanged, now: now)
        else { return false }
        switch verdict {
        case .none:
            return false
        case .notAnswering(let error):
            if configuration.daemonRequired {
                dropDaemon()
                throw .failed(.noDaemonAnswered([error]))
            }
            // Kept open: its answer, or the subscription's next line, says
            // the daemon is back.
            try note(error)
            try startEngine(now)
            return false
        case .answeringAgain:
            resubscribe()
            return true
        case .gone(let error):
            try daemonFailed(error, now)
            return true
        }
    }

    /// Reads the daemon's lines, or gives up on a first answer that is
    /// overdue. Returns whether the daemon followed changed.
    private func serviceDaemon(readable: Bool, _ now: ContinuousClock.Instant) throws(Ending) -> Bool {
        guard let (connection, link) = daemon else { return false }
        guard readable else {
            if let due = link.firstAnswerBy, now >= due {
                try daemonFailed(.timedOut(path: connection.path, timeout: DaemonConnection.answerTimeout), now)
                return true
            }
            return false
        }
        if liveness?.isUnresponsive == true {
            // It spoke again, on the subscription this time.
            resubscribe()
            return true
        }
        let lines: [[UInt8]]
        do throws(DaemonClientError) {
            guard let read = try connection.readAvailable() else { throw .closed(path: connection.path) }
            lines = read
        } catch {
            try daemonFailed(error, now)
            return true
        }
        // Every line, statuses included: each status says what changed since
        // the one before, so the newest alone would hide a handover in an
        // older one read with it.
        for line in lines {
            if try act(on: line, now) { return true }
        }
        return false
    }

    /// One line from the daemon. Returns whether the daemon followed changed.
    private func act(on line: [UInt8], _ now: ContinuousClock.Instant) throws(Ending) -> Bool {
        guard let events = daemon?.link.read(line, passesThrough: stream.passesThrough(line)) else { return true }
        for event in events {
            switch event {
            case .news(let update):
                try pass(.status(update))
                do throws(DaemonClientError) { stream.passed(try update.status()) } catch {
                    try daemonFailed(error, now)
                    return true
                }
            case .answered(let status, let line):
                try daemonAnswered(now)
                try offer(status, line: line)
            case .status(let status, let line):
                try offer(status, line: line)
            case .destination(let id, let status, let line):
                // An id unwatched meanwhile names nothing.
                guard let key = followed.key(wireID: id) else { continue }
                try forward(key, status, line: line)
            case .refused(let error, let code, let id):
                guard let id, let key = followed.key(wireID: id) else {
                    // About a destination unfollowed meanwhile (its unwatch, a
                    // refusal already on its way): nothing is asked of it now.
                    if let id, followed.wasIssued(id) { continue }
                    try daemonFailed(error, now)
                    return true
                }
                switch code {
                case RequestError.tooManyWatches, RequestError.badDestination, RequestError.duplicateID:
                    // Refused: the daemon holds no watch for it.
                    try watchRefused(key, error, now)
                default:
                    // lookup_failed, or what a newer daemon says about it: the
                    // watch is held, and the daemon's next evaluation answers it.
                    try note(error)
                }
            case .failed(let error, let otherNetwork):
                if otherNetwork, let path = daemon?.connection.path { otherNetworks.insert(path) }
                try daemonFailed(error, now)
                return true
            }
        }
        return false
    }

    /// The daemon's first answer: the next failure is news, and in-process
    /// can stop, but for what the daemon refused.
    private func daemonAnswered(_ now: ContinuousClock.Instant) throws(Ending) {
        retry.succeeded()
        failures.daemonAnswered()
        try say(following: .daemon)
        if followed.anyRefusedByDaemon { try syncEngineKeys(now) } else { stopEngine() }
    }

    /// The daemon failed: drop it, say so, retry on the schedule, and follow
    /// in-process meanwhile where the source allows.
    private func daemonFailed(_ error: DaemonClientError, _ now: ContinuousClock.Instant) throws(Ending) {
        dropDaemon()
        if configuration.daemonRequired { throw .failed(.noDaemonAnswered([error])) }
        if case .protocolError(.versionMismatch) = error, configuration.source == .daemon {
            logger.error("\(error.description)")
            throw .failed(.noDaemonAnswered([error]))
        }
        let anyToAsk = configuration.socketPaths.contains { !otherNetworks.contains($0) }
        // A daemon-only source with every daemon another network's has
        // nothing to wait for: it ends, as a `.daemon` source does when no daemon answers.
        if !anyToAsk, configuration.source == .daemon { throw .failed(.noDaemonAnswered([error])) }
        try note(error)
        // With every daemon another network's, there is nothing to ask again:
        // no timer.
        if anyToAsk { retry.failed(now: now) }
        try startEngine(now)
    }

    /// A daemon that did not answer does again: a fresh subscription, whose
    /// first answers are its state now, compared with what in-process
    /// delivered meanwhile (which stops at that answer).
    private func resubscribe() {
        dropDaemon()
        retry.now()
    }

    private func dropDaemon() {
        daemon = nil
        liveness?.forget()
    }

    /// Passes on and logs a daemon failure, once: a refusing daemon costs
    /// one warning, not one per retry.
    private func note(_ error: DaemonClientError) throws(Ending) {
        try pass(.problem(.noDaemonAnswered([error])))
        if let entry = failures.entry(for: error, source: configuration.source) {
            logger.log(level: entry.level, "\(entry.message)", metadata: entry.metadata)
        }
    }

    // MARK: In-process

    /// Starts the engine, where the source allows and none runs: the status,
    /// and every destination the daemon does not answer for.
    private func startEngine(_ now: ContinuousClock.Instant) throws(Ending) {
        guard configuration.source != .daemon else { return }
        do { try inProcess.start() } catch {
            // The caller retries on the schedule.
            try reportInProcessFailure(error)
            return
        }
        if !daemonAnswers {
            try say(following: .embedded)
            // Its status, the first or what it followed while the daemon
            // answered: a daemon that stopped answering missed the same changes.
            if let status = inProcess.lastStatus { try offer(status, line: nil) }
        }
        try syncEngineKeys(now)
    }

    private func stopEngine() {
        inProcess.stop()
    }

    /// Makes the engine hold every destination while no daemon answers, and
    /// only those the daemon refused while one does.
    private func syncEngineKeys(_ now: ContinuousClock.Instant) throws(Ending) {
        guard inProcess.isRunning else { return }
        let wanted = followed.ordered(followed.inProcess(daemonAnswers: daemonAnswers))
        try computed(now) { () throws(NetlinkError) in try inProcess.hold(wanted, now: now) }
    }

    private func serviceEngine(_ input: NetworkEngine.Input, _ now: ContinuousClock.Instant) throws(Ending) {
        try computed(now) { () throws(NetlinkError) in try inProcess.handle(input, now: now) }
    }

    /// Once per wake-up: the status, when a route it rests on expired, and
    /// the destinations whose answers may have changed.
    private func evaluateInProcess(_ now: ContinuousClock.Instant) throws(Ending) {
        guard inProcess.isRunning else { return }
        try computed(now) { () throws(NetlinkError) in try inProcess.expireRoutes(now: now) }
        guard inProcess.isRunning else { return }
        try computed(now) { () throws(NetlinkError) in try inProcess.evaluateDestinations(now: now) }
    }

    /// Delivers what the in-process half computed: its status while no
    /// daemon answers, its answers for the destinations it holds.
    private func computed(
        _ now: ContinuousClock.Instant, _ compute: () throws(NetlinkError) -> [InProcessFollower.Event]
    ) throws(Ending) {
        let events: [InProcessFollower.Event]
        do { events = try compute() } catch {
            try engineFailed(error, now)
            return
        }
        for event in events {
            switch event {
            case .status(let status): if !daemonAnswers { try offer(status, line: nil) }
            case .destination(let key, let status): try forward(key, status, line: nil)
            case .reopened(let error): try pass(.problem(.inProcessFailed(error, daemonFailures: [])))
            }
        }
    }

    /// Netlink failed in-process and could not be reopened: again after a
    /// while, in-process or with the daemon's next try.
    private func engineFailed(_ error: NetlinkError, _ now: ContinuousClock.Instant) throws(Ending) {
        stopEngine()
        try reportInProcessFailure(error)
        if !retry.isScheduled { retry.failed(now: now) }
    }

    /// Netlink failed in-process: the end of a session that can't wait,
    /// else a problem passed on and logged, and retried.
    private func reportInProcessFailure(_ error: NetlinkError) throws(Ending) {
        guard configuration.retryingInProcess else { throw .failed(.inProcessFailed(error, daemonFailures: [])) }
        try pass(.problem(.inProcessFailed(error, daemonFailures: [])))
        logger.warning("in-process network monitor failed; retrying", metadata: ["error": "\(error)"])
    }

    // MARK: Delivering

    /// Delivers a status unless it repeats what was delivered (``StatusStream``).
    private func offer(_ status: NetworkStatus, line: [UInt8]?) throws(Ending) {
        guard let detail = stream.detail else { return }
        // A daemon that predates summaries answers in full: reduced here.
        let offered: (status: NetworkStatus, line: [UInt8]?) = line.map { StatusUpdate.inDetail((status, $0), detail) } ?? (status, nil)
        if let update = stream.offer(offered.status, line: offered.line) { try pass(.status(update)) }
    }

    /// Says where what follows comes from, when that changed.
    private func say(following source: StatusSource) throws(Ending) {
        if let update = stream.follow(source) { try pass(update) }
    }

    private func pass(_ update: Update) throws(Ending) {
        guard deliver?(update) == true else { throw .stopped }
    }
}
