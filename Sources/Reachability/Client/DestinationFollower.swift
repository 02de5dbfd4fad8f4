#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Follows destinations on the calling thread: each one's answer, then one
/// per change. From the daemon (one `watch` per destination on one
/// connection) while one answers; in-process (``EmbeddedDestinationMonitor``)
/// where none does, or once it goes away, for `.automatic`; a `.daemon`
/// follower that has had answers reconnects with capped backoff instead.
package final class DestinationFollower: Sendable {
    package let query: DestinationQuery
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
        // A reconnection sends every answer again: only changes go on.
        var delivered = [DestinationStatus?](repeating: nil, count: destinations.count)
        func forward(_ update: Update) -> Bool {
            if let last = delivered[update.position], last.source == update.status.source,
                last.hasSameAnswer(as: update.status)
            {
                return true
            }
            delivered[update.position] = update.status
            return deliver(update)
        }
        var failures: [DaemonClientError] = []
        var retry = RetrySchedule(backoff)
        var answered = false
        while query.source != .embedded {
            for path in query.socketPaths {
                do throws(DaemonClientError) {
                    let connection = try DaemonConnection(path: path, timeout: DaemonClient.defaultTimeout)
                    guard adopt(connection) else { return }
                    defer { connection.close() }
                    let outcome = try follow(connection, destinations, until: deadline) { update in
                        answered = true
                        retry.succeeded()
                        return forward(update)
                    }
                    if outcome == false { return }
                    // The daemon went away.
                    failures = [.closed(path: path)]
                    break
                } catch {
                    if isCancelled { return }
                    failures.append(error)
                }
            }
            // `.automatic` follows in-process from here on; `.daemon` waits for
            // a daemon with capped backoff, once one has answered.
            guard query.source == .daemon, answered else { break }
            retry.failed()
            guard let due = retry.due, sleep(until: min(due, deadline ?? due)), deadline.map({ .now < $0 }) ?? true
            else { return }
            failures.removeAll()
        }
        guard query.source != .daemon else { throw .noDaemonAnswered(failures) }
        do throws(NetlinkError) {
            try EmbeddedDestinationMonitor(destinations, family: query.family).run(until: deadline, stop: stop) {
                position, status in
                forward(Update(position: position, status: status, line: nil))
            }
        } catch {
            throw .inProcessFailed(error, daemonFailures: failures)
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

    /// Returns `false` when told to stop or at `deadline`, `true` when the
    /// daemon went away.
    private func follow(
        _ connection: DaemonConnection, _ destinations: [Destination], until deadline: ContinuousClock.Instant?,
        _ deliver: (Update) -> Bool
    ) throws(DaemonClientError) -> Bool {
        for (position, destination) in destinations.enumerated() {
            try connection.send(ClientRequest(.watch, destination: destination, id: String(position), family: query.family))
        }
        var reader = DaemonLineReader()
        let firstBy = ContinuousClock.now + DaemonClient.defaultTimeout
        var first = true
        while true {
            let lines: [[UInt8]]?
            do {
                // The first answers (pending ones for names) come at once; a
                // daemon that sends none is as good as gone.
                let wait = first ? min(firstBy, deadline ?? firstBy) : deadline
                lines = try connection.nextLines(&reader, deadline: wait, timeout: DaemonClient.defaultTimeout)
            } catch {
                if connection.isInterrupted { return false }
                if let deadline, ContinuousClock.now >= deadline { return false }
                throw error
            }
            guard let lines else { return !connection.isInterrupted }
            first = false
            for line in lines {
                guard let (position, status) = try DaemonClient.destinationAnswer(from: line, among: destinations.count)
                else { continue }
                if !deliver(Update(position: position, status: status, line: line)) { return false }
            }
        }
    }
}
