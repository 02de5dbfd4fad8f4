#if canImport(Glibc)
import Glibc
#endif
import Logging

/// The loop behind every follower of the network: subscribes to a daemon,
/// reconnects with backoff, and follows netlink in-process while no daemon
/// answers, as its source allows. It runs on the calling thread and uses no
/// tasks: one `poll` over the daemon's socket, the netlink socket and a stop
/// pipe, with a timeout only while a retry or a first answer is due.
///
/// ``ReachabilityMonitor`` runs one on a thread of its own; `reachd monitor`
/// and `wait-online` run one on their main thread, so a status reaches stdout
/// with no hop between threads, and a client waiting on a quiet network makes
/// no system calls at all.
package final class StatusFollower {
    /// What the follower was told of, for ``ReachabilityMonitor/lastError``.
    package typealias ErrorSink = (any Error) -> Void

    private let source: ReachabilityMonitor.Source
    private let socketPaths: [String]
    private let logger: Logger
    private let stop: WakeSignal?
    private let recordError: ErrorSink
    private let traceDatagrams: (([UInt8]) -> Void)?
    private let requiringAnswer: Bool
    private let detail: StatusDetail

    /// The newest status delivered: a status describing the same network from
    /// the same source (a resubscription renumbers them) is not delivered again.
    private var current: NetworkStatus?
    /// The last failure warned about since the daemon last answered: a
    /// refusing daemon costs one warning, not one per retry.
    private var lastWarned: String?

    /// - Parameters:
    ///   - stop: signalled to end ``run(until:deliver:)`` from another thread.
    ///   - recordError: told of every failure, as it happens.
    ///   - traceDatagrams: handed every netlink datagram the in-process monitor reads.
    ///   - requiringAnswer: throw a daemon's failure, rather than retry, until
    ///     it has answered once: what a socket the user named needs.
    ///   - detail: what to deliver: with `.summary`, statuses without the
    ///     interface list, and only when the summary changed, from the daemon
    ///     and in-process alike.
    package init(
        source: ReachabilityMonitor.Source, socketPaths: [String], detail: StatusDetail = .full,
        backoff: ReachabilityMonitor.Backoff = .init(),
        logger: Logger, stop: WakeSignal? = nil, recordError: @escaping ErrorSink = { _ in },
        traceDatagrams: (([UInt8]) -> Void)? = nil, requiringAnswer: Bool = false
    ) {
        self.traceDatagrams = traceDatagrams
        self.requiringAnswer = requiringAnswer
        self.detail = detail
        self.source = source
        self.socketPaths = socketPaths
        retry = RetrySchedule(backoff)
        self.logger = logger
        self.stop = stop
        self.recordError = recordError
    }

    /// The daemon connection being followed or tried.
    private struct DaemonLink {
        let connection: DaemonConnection
        var reader = DaemonLineReader()
        /// Until the first status arrives: when to give up on it.
        var firstAnswerBy: ContinuousClock.Instant?
    }

    /// Thrown when the caller's `deliver` says it has had enough.
    private struct Stopped: Error {}

    // What one run follows; see run(until:deliver:).
    private var deliver: ((StatusUpdate) -> Bool)?
    private var daemon: DaemonLink?
    /// While a subscribed daemon has answered: whether it still does.
    private var liveness: DaemonLiveness?
    private var watcher: NetworkWatcher?
    /// Whether a daemon has answered since the run began.
    private var answered = false
    /// When to try the daemon again or, for an in-process follower, start
    /// netlink again.
    private var retry: RetrySchedule

    /// Calls `deliver` with each new status until it returns `false`,
    /// `deadline` passes, or `stop` is signalled. Throws only what ends a
    /// `.daemon` follower for good (a daemon of another protocol version, or
    /// any failure before the first answer when `requiringAnswer`) or a
    /// failure of `poll` itself.
    package func run(until deadline: ContinuousClock.Instant? = nil, deliver: (StatusUpdate) -> Bool) throws {
        try withoutActuallyEscaping(deliver) { deliver in
            self.deliver = deliver
            retry = RetrySchedule(retry.backoff)
            answered = false
            defer {
                dropDaemon()
                watcher = nil
                self.deliver = nil
            }
            do { try loop(until: deadline) } catch is Stopped {}
        }
    }

    private func loop(until deadline: ContinuousClock.Instant?) throws {
        var descriptors: [pollfd] = []
        while true {
            let now = ContinuousClock.now
            if let deadline, now >= deadline { return }
            if retry.takeIfDue(now) { try attempt(now) }

            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: stop?.fileDescriptor ?? -1, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: daemon?.connection.fd ?? -1, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: watcher?.fileDescriptor ?? -1, events: Int16(POLLIN), revents: 0))
            // Heard once the daemon has answered; what it heard before then is
            // queued, and probed for at once.
            let answering = daemon != nil && daemon?.firstAnswerBy == nil
            descriptors.append(pollfd(fd: answering ? liveness?.sentinelDescriptor ?? -1 : -1, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: liveness?.probeDescriptor ?? -1, events: Int16(POLLIN), revents: 0))
            let wake = [deadline, retry.due, daemon?.firstAnswerBy, liveness?.nextDeadline].compactMap { $0 }.min()
            guard poll(&descriptors, nfds_t(descriptors.count), wake.map(pollMilliseconds(until:)) ?? -1) >= 0 else {
                if errno == EINTR { continue }
                throw SystemError("poll")
            }
            if descriptors[0].revents != 0 { return }
            // Each step that changes which daemon is followed starts a new pass.
            if try checkLiveness(kernelChanged: descriptors[3].revents != 0, probeReadable: descriptors[4].revents != 0) {
                continue
            }
            if try serviceDaemon(readable: descriptors[1].revents != 0) { continue }
            if descriptors[2].revents != 0 { try serviceNetlink() }
        }
    }

    /// The retry schedule says it is time: in-process for an embedded
    /// follower, else subscribe to the daemon (and in-process meanwhile where
    /// the source allows, should that fail).
    private func attempt(_ now: ContinuousClock.Instant) throws {
        if source == .embedded {
            try followInProcess()
            if watcher == nil { retry.failed(now: now) }
            return
        }
        // Listening before subscribing: see DaemonLiveness.init.
        liveness = try? DaemonLiveness(path: socketPaths.first ?? "")
        do throws(DaemonClientError) {
            let connection = try connectAndSubscribe()
            liveness?.path = connection.path
            daemon = DaemonLink(connection: connection, firstAnswerBy: now + DaemonClient.defaultTimeout)
        } catch {
            try daemonFailed(error)
        }
    }

    /// What the liveness probe says about a daemon that has answered. Returns
    /// whether the daemon followed changed (so the pass starts again).
    private func checkLiveness(kernelChanged: Bool, probeReadable: Bool) throws -> Bool {
        guard let verdict = liveness?.verdict(probeReadable: probeReadable, kernelChanged: kernelChanged, now: .now)
        else { return false }
        switch verdict {
        case .none:
            return false
        case .notAnswering(let error):
            // Kept open: its answer, or the subscription's next line, says
            // the daemon is back.
            try handle(error)
            try followInProcess()
            return false
        case .answeringAgain:
            resubscribe()
            return true
        case .gone(let error):
            try daemonFailed(error)
            return true
        }
    }

    /// Reads the daemon's next line, or gives up on a first answer that is
    /// overdue. Returns whether the daemon followed changed.
    private func serviceDaemon(readable: Bool) throws -> Bool {
        guard let link = daemon else { return false }
        guard readable else {
            if let due = link.firstAnswerBy, ContinuousClock.now >= due {
                try daemonFailed(.timedOut(path: link.connection.path, timeout: DaemonClient.defaultTimeout))
            }
            return false
        }
        if liveness?.isUnresponsive == true {
            // It spoke again, on the subscription this time.
            resubscribe()
            return true
        }
        let line: [UInt8]
        do throws(DaemonClientError) {
            guard let next = try link.connection.nextLine(&daemon!.reader, deadline: nil, timeout: DaemonClient.defaultTimeout)
            else { throw .closed(path: link.connection.path) }
            line = next
        } catch {
            try daemonFailed(error)
            return false
        }
        if link.firstAnswerBy == nil, StatusUpdate.isStatusLine(line),
            detail == .full || StatusUpdate.contains(Self.summaryMarker, in: line)
        {
            // A change on a subscription that has answered: the daemon
            // publishes only changes, so it needs no comparing, and the caller
            // may use the line before it is decoded (reachd monitor --json
            // prints it).
            let update = StatusUpdate(line: line)
            try pass(update)
            do throws(DaemonClientError) { current = try update.status() } catch { try daemonFailed(error) }
            return false
        }
        let status: NetworkStatus?
        do throws(DaemonClientError) { status = try DaemonClient.status(from: line) } catch {
            try daemonFailed(error)
            return false
        }
        guard let status else { return false }
        if link.firstAnswerBy != nil {
            // It answered: the next failure is news, and in-process can stop.
            daemon?.firstAnswerBy = nil
            answered = true
            retry.succeeded()
            lastWarned = nil
            watcher = nil
        }
        let answer = DaemonClient.inDetail((status, line), detail)
        try offer(answer.status, answer.line)
        return false
    }

    /// Reads a batch of netlink notifications in-process; a failing socket is
    /// reopened, or retried on the schedule.
    private func serviceNetlink() throws {
        guard let active = watcher else { return }
        let status: NetworkStatus?
        do {
            status = try active.handleReadable()
        } catch {
            recordError(error)
            logger.warning("netlink failed; reopening its sockets", metadata: ["error": "\(error)"])
            do {
                status = try active.reopen()
            } catch {
                // Again after a while: in-process, or (automatic) with the daemon's next try.
                watcher = nil
                if source == .embedded || (!retry.isScheduled && daemon == nil) { retry.failed() }
                return
            }
        }
        if let status { try offer(status) }
    }

    /// Delivers a status unless it describes what was delivered last (from
    /// the same source: a resubscription renumbers them).
    /// A daemon's status comes in the form asked for (``DaemonClient/inDetail(_:_:)``);
    /// an in-process one is reduced here.
    private func offer(_ status: NetworkStatus, _ line: [UInt8]? = nil) throws {
        let reduced = line == nil ? status.detailed(detail) : status
        if let current, current.source == reduced.source, current.describesSameNetwork(as: reduced) { return }
        current = reduced
        try pass(StatusUpdate(reduced, line: line))
    }

    private func pass(_ update: StatusUpdate) throws {
        guard deliver?(update) == true else { throw Stopped() }
    }

    /// In-process, where the source allows and none runs yet: its first status.
    private func followInProcess() throws {
        guard source != .daemon, watcher == nil else { return }
        let started: NetworkWatcher, first: NetworkStatus
        do {
            started = try NetworkWatcher(source: .embedded, logger: logger)
            if let traceDatagrams { started.traceDatagrams(traceDatagrams) }
            first = try started.start()
        } catch {
            recordError(error)
            logger.warning("in-process network monitor failed; retrying", metadata: ["error": "\(error)"])
            return
        }
        watcher = started
        try offer(first)
    }

    /// Closes the daemon's subscription and its liveness probe.
    private func dropDaemon() {
        daemon?.connection.close()
        daemon = nil
        liveness?.close()
        liveness = nil
    }

    /// The daemon failed: drop it, say so, retry on the schedule, and follow
    /// in-process meanwhile where the source allows.
    private func daemonFailed(_ error: DaemonClientError) throws {
        dropDaemon()
        if requiringAnswer && !answered { throw error }
        try handle(error)
        retry.failed()
        try followInProcess()
    }

    /// A daemon that did not answer does again: a fresh subscription, whose
    /// first line is its state now, compared with what in-process delivered
    /// meanwhile (it stops at that answer).
    private func resubscribe() {
        dropDaemon()
        retry.now()
    }

    /// The first of ``socketPaths`` that accepts a subscription. The answer is
    /// awaited in the loop, so a stopped daemon doesn't stop the in-process monitor.
    private func connectAndSubscribe() throws(DaemonClientError) -> DaemonConnection {
        var lastError: DaemonClientError?
        for path in socketPaths {
            do throws(DaemonClientError) {
                return try DaemonConnection.asking(path: path, ClientRequest(.subscribe, detail: detail))
            } catch {
                if path != socketPaths.last { try handle(error) }
                lastError = error
            }
        }
        throw lastError ?? .closed(path: "")
    }

    private static let summaryMarker = Array(#""detail":"summary""#.utf8)

    /// Records and logs a daemon failure; throws it when the follower can't go on.
    private func handle(_ error: DaemonClientError) throws(DaemonClientError) {
        recordError(error)
        let description = "\(error)"
        let isNews = lastWarned != description
        lastWarned = description
        let fallback = source == .automatic ? "; following the network in-process meanwhile" : ""
        switch error {
        case .protocolError(.versionMismatch):
            if source == .daemon {
                logger.error("\(error.description)")
                throw error
            }
            if isNews { logger.warning("\(error.description); following the network in-process instead") }
        case .notRunning, .closed:
            logger.debug("daemon unavailable", metadata: ["error": "\(error)"])
        case .timedOut, .connectionFailed, .rejected, .protocolError:
            if isNews {
                logger.warning("\(error.description)\(fallback)")
            } else {
                logger.debug("daemon still unavailable", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// A status as ``StatusFollower`` delivers it: from a daemon, its line as
/// received, decoded only when asked (once).
package struct StatusUpdate {
    /// The daemon's line without its newline; `nil` when computed in-process.
    package let line: [UInt8]?
    private let decoded: Decoded

    private final class Decoded {
        var result: Result<NetworkStatus, DaemonClientError>?
    }

    init(_ status: NetworkStatus, line: [UInt8]?) {
        self.line = line
        decoded = Decoded()
        decoded.result = .success(status)
    }

    init(line: [UInt8]) {
        self.line = line
        decoded = Decoded()
    }

    /// The status; decoding a daemon's line the first time.
    package func status() throws(DaemonClientError) -> NetworkStatus {
        if let result = decoded.result { return try result.get() }
        let result: Result<NetworkStatus, DaemonClientError>
        do throws(DaemonClientError) {
            guard let status = try DaemonClient.status(from: line ?? []) else {
                throw .protocolError(.malformed("a line that says it is a status is not one"))
            }
            result = .success(status)
        } catch {
            result = .failure(error)
        }
        decoded.result = result
        return try result.get()
    }

    /// Whether `line` says it is a status (an error line must not pass for one).
    static func isStatusLine(_ line: [UInt8]) -> Bool {
        contains(statusMarker, in: line)
    }

    private static let statusMarker = Array(#""type":"status""#.utf8)

    static func contains(_ marker: [UInt8], in line: [UInt8]) -> Bool {
        guard line.count >= marker.count else { return false }
        return (0...(line.count - marker.count)).contains { start in
            line[start..<(start + marker.count)].elementsEqual(marker)
        }
    }
}
