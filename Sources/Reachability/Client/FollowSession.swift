#if canImport(Glibc)
import Glibc
#endif
import Logging

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
/// - one retry schedule, for the daemon and for restarting netlink alike,
///   and, while no daemon's socket exists, a watch of where the
///   sockets would appear in its place (``FileChangeWatch``);
/// - while no daemon answers, its in-process half (``InProcessFollower``):
///   the daemon's own composition of watcher and tracker, so the answers are
///   the daemon's.
///
/// Every decision is ``FollowState``'s, with no I/O: the loop below waits,
/// reads, turns what it found into the state's inputs and performs the
/// effects it returns. So every reconnection, refusal and fallback is tested
/// without a socket, and this type holds only descriptors.
///
/// It waits in one `poll` (``PollSet``) with a timeout only while a retry, a
/// first answer, a liveness probe or a name's resolution is due: a client
/// following a quiet network makes no system calls, with a daemon or
/// waiting for one. Destinations are added
/// and removed while it runs, through its ``Remote``; a reconnection sends
/// the watches again, and answers that repeat what was delivered are
/// dropped, per destination.
///
/// ``ReachabilityMonitor`` runs one on a thread of its own; `reachd monitor`,
/// `reach --watch` and `wait-online` run one on their main thread, so an
/// answer reaches stdout with no hop between threads.
package final class FollowSession {
    /// What a session delivers, in order.
    package enum Update: Equatable {
        /// What follows comes from the daemon (it answered) or is computed
        /// in-process (no daemon answers): said once per switch, before
        /// anything from the new source.
        case following(StatusSource)
        /// The status changed (or its source did).
        case status(StatusUpdate)
        /// A destination's answer changed (or its source did). A line when it
        /// came from a daemon.
        case destination(DestinationKey, DestinationStatus, line: [UInt8]?)
        /// The daemon will not answer for this destination (it refused the
        /// watch) and the source allows nothing else: it is no longer followed.
        case destinationFailed(DestinationKey, ReachabilityError)
        /// A failure met and worked around: the daemon went away or stopped
        /// answering, netlink failed in-process. Once per failure.
        case problem(ReachabilityError)
    }

    package let remote: Remote
    private let logger: Logger
    /// Every decision; the rest of this type waits, reads and performs.
    private var state: FollowState
    /// The daemon connection being followed or tried.
    private var connection: DaemonConnection?
    /// Made at the first try of a daemon, kept for the session's life.
    private var liveness: DaemonLiveness?
    /// Where the daemons' sockets would appear, while none listens.
    private var socketWatch: FileChangeWatch?
    private let inProcess: InProcessFollower

    /// Why a run ends.
    private enum Ending {
        /// Told to stop, the caller had enough, or the deadline passed.
        case stopped
        case failed(ReachabilityError)
    }

    /// What an effect came to.
    private enum Outcome {
        case done
        /// A result for the state to judge.
        case then(FollowState.Input)
        case ends(Ending)
    }

    private enum Token: Equatable {
        case commands, daemon, sentinel, probe, sockets
        case engine(NetworkEngine.Input)
    }

    /// `traceDatagrams` is handed every netlink datagram the in-process
    /// engine reads: a tool for the engine, not a decision of the session's.
    package init(
        _ configuration: Configuration, remote: Remote, logger: Logger, traceDatagrams: (@Sendable ([UInt8]) -> Void)? = nil
    ) {
        self.remote = remote
        self.logger = logger
        state = FollowState(configuration)
        inProcess = InProcessFollower(logger: logger, traceDatagrams: traceDatagrams)
    }

    package convenience init(
        _ configuration: Configuration, logger: Logger, traceDatagrams: (@Sendable ([UInt8]) -> Void)? = nil
    ) throws(ReachabilityError) {
        do { self.init(configuration, remote: try Remote(), logger: logger, traceDatagrams: traceDatagrams) } catch {
            throw .waitFailed(error)
        }
    }

    /// Follows on the calling thread, calling `deliver` with each update
    /// until it returns `false`, `deadline` passes or ``Remote/stop()`` is
    /// called. Throws only what ends it for good: a daemon of another protocol
    /// version to a `.daemon` session, any daemon failure when
    /// ``Configuration/daemonRequired``, or a failure of `poll`.
    package func run(until deadline: ContinuousClock.Instant? = nil, deliver: (Update) -> Bool) throws(ReachabilityError) {
        state.restart(at: .now)
        defer {
            connection = nil
            socketWatch = nil
            liveness?.forget()
            inProcess.stop()
            state.closed()
        }
        if case .failed(let error) = loop(until: deadline, deliver) { throw error }
    }

    private func loop(until deadline: ContinuousClock.Instant?, _ deliver: (Update) -> Bool) -> Ending {
        // Commands sent before the run are waiting already.
        var signalled = true
        // Listed afresh before each wait, in room kept from the last.
        var descriptors = PollSet<Token>()
        while true {
            let now = ContinuousClock.now
            if let deadline, now >= deadline { return .stopped }
            if signalled { remote.wake.drain() }
            if let ending = perform(.commands(remote.takeCommands()), now, deliver) { return ending }
            // Time matters only when something is due: a route change's
            // wake-up steps the state once, for what it read. Asked once a
            // turn (again only after a tick), in place (FollowState.nextDeadline).
            var due = state.nextDeadline
            if let overdue = due, now >= overdue {
                if let ending = perform(.tick, now, deliver) { return ending }
                due = state.nextDeadline
            }

            descriptors.removeAll()
            descriptors.add(remote.wake.fileDescriptor, .commands)
            if let connection {
                descriptors.add(connection.fd, .daemon)
                // Heard once the daemon has answered; what it heard before
                // then is queued, and probed for at once.
                if state.phase.daemonHasAnswered { descriptors.add(liveness?.sentinelDescriptor, .sentinel) }
                descriptors.add(liveness?.probeDescriptor, .probe)
            }
            descriptors.add(socketWatch?.fileDescriptor, .sockets)
            for (input, fd) in inProcess.descriptors { descriptors.add(fd, .engine(input)) }
            // In pairs: the list's form makes an array, at every turn.
            let wake = Deadline.earliest(
                Deadline.earliest(deadline, due),
                Deadline.earliest(connection == nil ? nil : liveness?.nextDeadline, inProcess.nextDeadline))
            let events: [ReadinessEvent<Token>]
            do { events = try descriptors.wait(until: wake) } catch { return .failed(.waitFailed(error)) }
            // A few events at most, looked through where asked: nothing is
            // allocated for them on a route change's path.
            func ready(_ token: Token) -> Bool { events.contains { $0.token == token } }
            signalled = ready(.commands)

            let later = ContinuousClock.now
            var inputs: [FollowState.Input] = []
            if let connection,
                let verdict = liveness?.verdict(
                    probeReadable: ready(.probe), kernelChanged: ready(.sentinel),
                    subscription: connection, now: later)
            {
                inputs.append(.liveness(verdict))
            }
            if ready(.daemon) { inputs.append(.daemonReadable) }
            if ready(.sockets), socketWatch?.takeChanges() == true {
                socketWatch = nil
                inputs.append(.socketsChanged)
            }
            for input in inputs {
                if let ending = perform(input, later, deliver) { return ending }
            }
            // News of a change the sentinel heard: no probe for it. The only
            // place the subscription is read, so the only place to look.
            if ready(.daemon), let connection { liveness?.heard(connection) }
            for case .engine(let input) in events.lazy.map(\.token) where inProcess.isRunning {
                let computed = computed { () throws(NetlinkError) in try inProcess.handle(input, now: later) }
                if let ending = perform(computed, later, deliver) { return ending }
            }
            // Once per wake-up: the status, when a route it rests on expired,
            // then the destinations whose answers may have changed.
            if inProcess.isRunning {
                let computed = computed { () throws(NetlinkError) in try inProcess.expireRoutes(now: later) }
                if let ending = perform(computed, later, deliver) { return ending }
            }
            if inProcess.isRunning {
                let computed = computed { () throws(NetlinkError) in try inProcess.evaluateDestinations(now: later) }
                if let ending = perform(computed, later, deliver) { return ending }
            }
        }
    }

    /// Steps the state with `input`, delivers its updates and performs its
    /// effects in order. What an effect comes to is the next input, and the
    /// effects it decides join the end of the queue: each was decided after
    /// those before it. Returns why the run ends, if it does.
    private func perform(_ input: FollowState.Input, _ now: ContinuousClock.Instant, _ deliver: (Update) -> Bool) -> Ending? {
        // An input that says nothing is not stepped: no command came, or the
        // engine found nothing expired or moved (most wake-ups).
        if input == .commands([]) || input == .computed([]) { return nil }
        var next: FollowState.Input? = input
        var queue: [FollowState.Effect] = []
        var performed = 0
        while true {
            if let input = next {
                let step = state.step(input, now: now)
                for update in step.updates where !deliver(update) { return .stopped }
                queue += step.effects
            }
            guard performed < queue.count else { return nil }
            defer { performed += 1 }
            switch perform(queue[performed], now) {
            case .done: next = nil
            case .then(let input): next = input
            case .ends(let ending): return ending
            }
        }
    }

    private func perform(_ effect: FollowState.Effect, _ now: ContinuousClock.Instant) -> Outcome {
        switch effect {
        case .connect(let path, let requests):
            do throws(DaemonClientError) {
                // A short connect: a full listen queue blocks it.
                let made = try DaemonConnection(path: path, timeout: .milliseconds(100))
                // Listening before the daemon reads the request, so before it
                // answers (see DaemonLiveness.listen(to:)); made with the first
                // daemon that accepts, not while none runs. Without netlink, a
                // stopped daemon goes unnoticed once it has answered.
                if liveness == nil { liveness = try? DaemonLiveness() }
                liveness?.listen(to: path)
                try made.send(requests)
                connection = made
                return .then(.connected(path: path, ownNetwork: made.ownNetwork))
            } catch {
                return .then(.connectFailed(path: path, error))
            }
        case .send(let requests):
            do throws(DaemonClientError) { try connection?.send(requests) } catch { return .then(.daemonFailed(error)) }
        case .readDaemon:
            guard let connection else { return .done }
            do throws(DaemonClientError) {
                guard let lines = try connection.readAvailable() else { throw .closed(path: connection.path) }
                return .then(.daemonLines(lines))
            } catch {
                return .then(.daemonFailed(error))
            }
        case .decode(let update, let lines):
            // A reader's decoding is kept in the update: a status checked whole
            // wherever anyone reads what it says, and decoded once.
            guard update.decodedResult != nil || !lines.isEmpty else { return .then(.passedUndecoded(update)) }
            do throws(DaemonClientError) { return .then(.decoded(.success(try update.status()), then: lines)) } catch {
                return .then(.decoded(.failure(error), then: lines))
            }
        case .dropDaemon:
            connection = nil
            liveness?.forget()
        case .startEngine:
            do { try inProcess.start() } catch { return .then(.engineFailed(error)) }
            return .then(.engineStarted(lastStatus: inProcess.lastStatus))
        case .stopEngine:
            inProcess.stop()
        case .holdInProcess(let keys):
            return .then(computed { () throws(NetlinkError) in try inProcess.hold(keys, now: now) })
        case .dropInProcess(let key):
            inProcess.drop(key)
        case .log(let level, let message, let metadata):
            logger.log(level: level, "\(message)", metadata: metadata)
        case .watchSockets(let paths):
            do throws(SystemError) { socketWatch = try FileChangeWatch.daemonSockets(paths) } catch {
                logger.debug("cannot watch for the daemon's socket; trying it on a timer", metadata: ["error": "\(error)"])
                return .then(.socketsUnwatchable)
            }
        case .unwatchSockets:
            socketWatch = nil
        case .end(let error):
            return .ends(error.map { .failed($0) } ?? .stopped)
        }
        return .done
    }

    private func computed(_ compute: () throws(NetlinkError) -> [InProcessFollower.Event]) -> FollowState.Input {
        do { return .computed(try compute()) } catch { return .engineFailed(error) }
    }
}
