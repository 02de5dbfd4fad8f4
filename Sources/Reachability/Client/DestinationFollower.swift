#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Follows destinations on the calling thread: each one's answer, then one
/// per change. From the daemon (one `watch` per destination on one
/// connection) while one answers. Where none does, or once it goes away,
/// `.automatic` answers in-process (``EmbeddedDestinationMonitor``) and asks
/// the daemon again with capped backoff, going back to it once it answers;
/// a `.daemon` follower that has had answers waits for it the same way.
package final class DestinationFollower: Sendable {
    private let query: DestinationQuery
    private let backoff: ReachabilityMonitor.Backoff
    private let stop: WakeSignal
    private let state = Mutex((connection: DaemonConnection?.none, cancelled: false))

    /// - Parameter backoff: between attempts to reach the daemon again, for a
    ///   `.daemon` query whose daemon went away.
    package init(_ query: DestinationQuery, backoff: ReachabilityMonitor.Backoff = .init()) throws(SystemError) {
        self.query = query
        self.backoff = backoff
        stop = try WakeSignal()
    }

    /// One destination's answer, with the daemon's line when it came from one.
    package struct Update: Sendable {
        /// The destination's position in the list followed.
        package var position: Int
        package var status: DestinationStatus
        package var line: [UInt8]?
    }

    /// Delivers until `deliver` returns `false`, ``cancel()`` is called or
    /// `deadline` passes. Throws ``StatusQueryError`` when no allowed source
    /// can answer.
    package func run(
        _ destinations: [Destination], until deadline: ContinuousClock.Instant? = nil, deliver: (Update) -> Bool
    ) throws(StatusQueryError) {
        // A reconnection sends every answer again: only changes go on. A
        // source says `pending` only before its first resolution of a name (a
        // restarted daemon, the in-process monitor taking over): the answer
        // delivered stands until that source knows better.
        var delivered = [DestinationStatus?](repeating: nil, count: destinations.count)
        func forward(_ update: Update) -> Bool {
            if let last = delivered[update.position],
                update.status.state == .pending
                    || (last.source == update.status.source && last.hasSameAnswer(as: update.status))
            {
                return true
            }
            delivered[update.position] = update.status
            return deliver(update)
        }
        var failures: [DaemonClientError] = []
        var retry = RetrySchedule(backoff)
        var answered = false
        // `.automatic`, while no daemon answers: kept between tries of the
        // daemon, so that asking again starts nothing over.
        var inProcess: EmbeddedDestinationMonitor?
        // The daemon refused a watch over a limit: it is not asked again.
        var refused: DaemonClientError?
        func forwardInProcess(_ position: Int, _ status: DestinationStatus) -> Bool {
            forward(Update(position: position, status: status, line: nil))
        }
        while true {
            paths: for path in query.source == .embedded || refused != nil ? [] : query.socketPaths {
                let connection: DaemonConnection
                let liveness: DaemonLiveness?
                let firstBy: ContinuousClock.Instant
                switch try attempt(path, destinations, until: deadline, meanwhile: inProcess, forwardInProcess) {
                case .stopped: return
                case .failed(let error):
                    failures.append(error)
                    continue paths
                case .sent(let sent, let watcher, let by):
                    connection = sent
                    liveness = watcher
                    firstBy = by
                }
                defer { connection.close() }
                var answeredHere = false
                do throws(DaemonClientError) {
                    let wentAway = try follow(
                        connection, liveness, destinations, firstBy: firstBy, until: deadline
                    ) { update in
                        answered = true
                        answeredHere = true
                        inProcess = nil
                        retry.succeeded()
                        failures.removeAll()
                        return forward(update)
                    }
                    guard wentAway else { return }
                    failures.append(.closed(path: path))
                    // Closed before a word: the next socket may hold a daemon.
                    if answeredHere { break paths }
                } catch {
                    if isCancelled { return }
                    failures.append(error)
                    if case .rejected(let code, _) = error, code == RequestError.tooManyWatches {
                        refused = error
                        break paths
                    }
                    if answeredHere { break paths }
                }
            }
            if let refused, query.source != .automatic { throw .noDaemonAnswered([refused]) }
            switch query.source {
            case .daemon:
                // Waits for a daemon with capped backoff, once one has answered.
                guard answered else { throw .noDaemonAnswered(failures) }
                retry.failed()
                guard let due = retry.due, sleep(until: min(due, deadline ?? due)), deadline.map({ .now < $0 }) ?? true
                else { return }
            case .automatic, .embedded:
                // In-process until the daemon is due to be asked again, as a
                // status follower does; for good with `.embedded`, or once the
                // daemon refused a watch.
                let askingAgain = query.source == .automatic && refused == nil
                if askingAgain { retry.failed() }
                let until = askingAgain ? [deadline, retry.due].compactMap { $0 }.min() : deadline
                do throws(NetlinkError) {
                    let monitor: EmbeddedDestinationMonitor
                    if let inProcess { monitor = inProcess } else {
                        monitor = try EmbeddedDestinationMonitor(destinations, family: query.family)
                        inProcess = monitor
                    }
                    switch try monitor.run(until: until, stop: stop, deliver: forwardInProcess) {
                    case .stopped, .woken: return
                    case .deadlinePassed: if let deadline, .now >= deadline { return }
                    }
                } catch {
                    throw .inProcessFailed(error, daemonFailures: failures)
                }
            }
            failures.removeAll()
        }
    }

    /// How a try of one daemon socket went.
    private enum Attempt {
        /// The watches were sent; the first answers are due by the instant.
        /// The watcher of the daemon's liveness was made before the connection.
        case sent(DaemonConnection, DaemonLiveness?, firstAnswersBy: ContinuousClock.Instant)
        /// No daemon there, or none that answered.
        case failed(DaemonClientError)
        /// Told to stop, or the deadline passed.
        case stopped
    }

    /// Connects to `path` and sends the watches. While `inProcess` answers,
    /// it goes on until the daemon's first answers arrive, so that a stopped
    /// daemon holds up nothing: the connect may block only briefly (a full
    /// listen queue), and the answers are awaited in the monitor's `poll`.
    private func attempt(
        _ path: String, _ destinations: [Destination], until deadline: ContinuousClock.Instant?,
        meanwhile inProcess: EmbeddedDestinationMonitor?, _ deliverInProcess: (Int, DestinationStatus) -> Bool
    ) throws(StatusQueryError) -> Attempt {
        // Listening before connecting: see DaemonLiveness.init. Without
        // netlink, a stopped daemon goes unnoticed once it has answered.
        let liveness = try? DaemonLiveness(path: path)
        let connection: DaemonConnection
        do throws(DaemonClientError) {
            connection = try DaemonConnection(
                path: path, timeout: inProcess == nil ? DaemonClient.defaultTimeout : .milliseconds(100))
            guard adopt(connection) else { return .stopped }
            do throws(DaemonClientError) {
                try connection.send(destinations.enumerated().map { position, destination in
                    ClientRequest(.watch, destination: destination, id: String(position), family: query.family)
                })
            } catch {
                connection.close()
                throw error
            }
        } catch {
            return isCancelled ? .stopped : .failed(error)
        }
        let firstBy = ContinuousClock.now + DaemonClient.defaultTimeout
        guard let inProcess else { return .sent(connection, liveness, firstAnswersBy: firstBy) }
        let ending: EmbeddedDestinationMonitor.Ending
        do throws(NetlinkError) {
            ending = try inProcess.run(
                until: min(firstBy, deadline ?? firstBy), stop: stop, wake: connection.fd, deliver: deliverInProcess)
        } catch {
            connection.close()
            throw .inProcessFailed(error, daemonFailures: [])
        }
        switch ending {
        case .woken:
            return .sent(connection, liveness, firstAnswersBy: firstBy)
        case .stopped:
            connection.close()
            return .stopped
        case .deadlinePassed:
            connection.close()
            if let deadline, .now >= deadline { return .stopped }
            return .failed(.timedOut(path: path, timeout: DaemonClient.defaultTimeout))
        }
    }

    /// Sleeps until `instant` unless cancelled first; returns whether it was not.
    private func sleep(until instant: ContinuousClock.Instant) -> Bool {
        var descriptor = pollfd(fd: stop.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while !isCancelled {
            let ready = poll(&descriptor, 1, pollMilliseconds(until: instant))
            if ready == 0 { return true }
            if ready > 0 { return false }
            guard errno == EINTR else { return false }
        }
        return false
    }

    /// Ends ``run(_:deliver:)`` from any thread.
    package func cancel() {
        let connection = state.withLock { state in
            state.cancelled = true
            return state.connection
        }
        connection?.interrupt()
        stop.signal()
    }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }

    private func adopt(_ connection: DaemonConnection) -> Bool {
        let cancelled = state.withLock { state in
            state.connection = connection
            return state.cancelled
        }
        if cancelled { connection.close() }
        return !cancelled
    }

    /// Reads the answers to the watches sent on `connection`. Returns `false`
    /// when told to stop or at `deadline`, `true` when the daemon closed the
    /// connection; throws when it stops answering. The first answers
    /// (`pending` ones for names) come at once: a daemon that sends none by
    /// `firstBy` is as good as gone. After them, a daemon that stops
    /// answering (SIGSTOP) is noticed as the status follower notices it
    /// (``DaemonLiveness``), when the kernel reports something it should
    /// have published; a quiet network costs no system calls.
    private func follow(
        _ connection: DaemonConnection, _ liveness: DaemonLiveness?, _ destinations: [Destination],
        firstBy: ContinuousClock.Instant, until deadline: ContinuousClock.Instant?, _ deliver: (Update) -> Bool
    ) throws(DaemonClientError) -> Bool {
        var reader = DaemonLineReader()
        var first = true
        var liveness = liveness
        defer { liveness?.close() }
        while true {
            var descriptors = [
                pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stop.fileDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: first ? -1 : liveness?.sentinelDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: liveness?.probeDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
            ]
            let wake = [first ? firstBy : nil, deadline, liveness?.nextDeadline].compactMap { $0 }.min()
            if poll(&descriptors, nfds_t(descriptors.count), wake.map(pollMilliseconds(until:)) ?? -1) < 0 {
                guard errno == EINTR else { throw .connectionFailed(path: connection.path, cause: SystemError("poll")) }
                continue
            }
            if descriptors[1].revents != 0 || isCancelled { return false }
            let now = ContinuousClock.now
            if let deadline, now >= deadline { return false }
            if descriptors[0].revents != 0 {
                // Whole lines come in one write: the rest of one is due at once.
                guard let lines = try connection.nextLines(
                    &reader, deadline: now + DaemonClient.defaultTimeout, timeout: DaemonClient.defaultTimeout)
                else { return true }
                first = false
                for line in lines {
                    guard let (position, status) = try DaemonClient.destinationAnswer(from: line, among: destinations.count)
                    else { continue }
                    if !deliver(Update(position: position, status: status, line: line)) { return false }
                }
            } else if first, now >= firstBy {
                throw .timedOut(path: connection.path, timeout: DaemonClient.defaultTimeout)
            }
            switch liveness?.verdict(
                probeReadable: descriptors[3].revents != 0, kernelChanged: descriptors[2].revents != 0, now: now) ?? .none
            {
            case .none, .answeringAgain: break
            case .notAnswering(let error), .gone(let error): throw error
            }
        }
    }
}
