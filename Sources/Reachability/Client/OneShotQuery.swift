import Logging

/// One answer, without following: the status, or destinations' answers,
/// from the first daemon that answers, else (where the source allows)
/// computed in-process. The core of ``ReachabilityMonitor/currentStatus(source:socketPath:detail:timeout:)``,
/// ``ReachabilityMonitor/reachability(of:family:source:socketPath:timeout:)``,
/// `reachd status`, `check` and `reach`; following changes is
/// ``FollowSession``'s.
///
/// One deadline policy: `timeout` is one budget for reaching a daemon,
/// shared by all the daemons tried, so a stopped one costs what is left of
/// it and two cost no more than one. A daemon that answered has the
/// resolver's time on top for the names it resolves.
package struct OneShotQuery: Sendable {
    package var source: SourcePreference
    /// Daemon sockets to try, in order.
    package var socketPaths: [String]

    /// `reach` requests one connection has in flight: under the daemon's
    /// limit per connection, whatever that is set to.
    static let window = 16
    /// How long a daemon that answered may take to answer a name: its
    /// resolver's timeout, and some.
    static let resolutionAllowance: Duration = .seconds(6)

    package init(source: SourcePreference, socketPaths: [String]) {
        self.source = source
        self.socketPaths = socketPaths
    }

    /// An answer, and where it came from.
    package struct Answer<Value: Sendable>: Sendable {
        package var value: Value
        /// The daemon's lines as received, one per value (what `--json`
        /// prints, so that keys a newer daemon adds survive); `nil` when
        /// computed in-process.
        package var lines: [[UInt8]]?
        /// Why each daemon tried before the answer did not give it.
        package var daemonFailures: [DaemonClientError]
    }

    /// The status, as `detail` asks. `.check` waits for the daemon's
    /// connectivity check and is never answered in-process.
    package func status(
        _ operation: ClientRequest.Operation = .get, detail: StatusDetail = .full,
        timeout: Duration = ReachabilityMonitor.defaultTimeout
    ) throws(ReachabilityError) -> Answer<NetworkStatus> {
        let (answer, failures) = askDaemons(timeout: timeout) { connection, link, deadline throws(DaemonClientError) in
            if operation == .check { return try Self.check(detail, on: connection, &link, by: deadline, timeout: timeout) }
            let (status, line) = try Self.firstStatus(operation, detail, on: connection, &link, by: deadline, timeout: timeout)
            return (status, [line])
        }
        if let (status, lines) = answer { return Answer(value: status, lines: lines, daemonFailures: failures) }
        guard source != .daemon, operation != .check else { throw .noDaemonAnswered(failures) }
        do throws(NetlinkError) {
            let status = try NetworkWatcher.snapshot(source: .inProcess).detailed(detail)
            return Answer(value: status, lines: nil, daemonFailures: failures)
        } catch {
            throw .inProcessFailed(error, daemonFailures: failures)
        }
    }

    /// Asks the first daemon that takes the request to run its
    /// connectivity check, without waiting for the answer (the daemon
    /// probes whether its client stays or not). Returns whether one took it;
    /// where none runs there is no check to ask, and nothing to do.
    @discardableResult
    package func requestCheck(timeout: Duration = ReachabilityMonitor.defaultTimeout) -> Bool {
        askDaemons(timeout: timeout) { connection, _, _ throws(DaemonClientError) in
            try connection.send([ClientRequest.check])
            return ((), [])
        }.answer != nil
    }

    /// One answer per destination, in order, each once its name has resolved.
    package func destinations(
        _ destinations: [Destination], family: AddressFamily?, timeout: Duration = ReachabilityMonitor.defaultTimeout
    ) throws(ReachabilityError) -> Answer<[DestinationStatus]> {
        let (answer, failures) = askDaemons(timeout: timeout) { connection, link, deadline throws(DaemonClientError) in
            try Self.reach(destinations, family: family, on: connection, &link, by: deadline, timeout: timeout)
        }
        if let (statuses, lines) = answer { return Answer(value: statuses, lines: lines, daemonFailures: failures) }
        guard source != .daemon else { throw .noDaemonAnswered(failures) }
        return Answer(
            value: try inProcess(destinations, family: family, daemonFailures: failures), lines: nil,
            daemonFailures: failures)
    }

    /// Asks the daemons in turn, all within one budget of `timeout` from now
    /// to connect and give their first answer: the first that does gives the
    /// answer, else its failures are returned. Each connection's lines are
    /// read through a ``DaemonLink``, as a follow session's are.
    private func askDaemons<Value>(
        timeout: Duration,
        _ ask: (DaemonConnection, inout DaemonLink, ContinuousClock.Instant) throws(DaemonClientError) -> (Value, [[UInt8]])
    ) -> (answer: (Value, [[UInt8]])?, failures: [DaemonClientError]) {
        guard source != .inProcess else { return (nil, []) }
        let deadline = ContinuousClock.now + timeout
        var failures: [DaemonClientError] = []
        for path in socketPaths {
            do throws(DaemonClientError) {
                let connection = try DaemonConnection(path: path, timeout: max(deadline - .now, .milliseconds(1)))
                var link = DaemonLink(path: path, ownNetwork: connection.ownNetwork, firstAnswerBy: deadline)
                return (try ask(connection, &link, deadline), failures)
            } catch {
                failures.append(error)
            }
        }
        return (nil, failures)
    }

    /// Sends `operation` and returns the daemon's first status, in
    /// `detail`, once it is known to describe this network.
    private static func firstStatus(
        _ operation: ClientRequest.Operation, _ detail: StatusDetail, on connection: DaemonConnection,
        _ link: inout DaemonLink, by deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(DaemonClientError) -> (status: NetworkStatus, line: [UInt8]) {
        try connection.send([ClientRequest(operation, detail: detail)])
        return StatusUpdate.inDetail(try status(from: connection, &link, by: deadline, timeout: timeout), detail)
    }

    /// The next status on `connection`: the first only once it describes
    /// this network (the link's rule).
    private static func status(
        from connection: DaemonConnection, _ link: inout DaemonLink, by deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(DaemonClientError) -> (status: NetworkStatus, line: [UInt8]) {
        while true {
            if let found = try events(from: connection, &link, by: deadline, timeout: timeout, upTo: { $0.status != nil }).last?.status {
                return found
            }
        }
    }

    /// What the next lines on `connection` mean, by `deadline`, line by line
    /// up to the first event `wanted` takes: what follows it in the read is
    /// not the asker's business (by default, a `reach`'s, all of it is). The
    /// daemon's refusal, a line that does not decode and another network's
    /// daemon throw.
    private static func events(
        from connection: DaemonConnection, _ link: inout DaemonLink, by deadline: ContinuousClock.Instant, timeout: Duration,
        upTo wanted: (DaemonLink.Event) -> Bool = { _ in false }
    ) throws(DaemonClientError) -> [DaemonLink.Event] {
        guard let lines = try connection.nextLines(by: deadline, timeout: timeout) else { throw .closed(path: connection.path) }
        var events: [DaemonLink.Event] = []
        for line in lines {
            for event in link.read(line, passesThrough: false) {
                switch event {
                case .failed(let error, _), .refused(let error, _, _): throw error
                case .news, .answered, .status, .destination:
                    events.append(event)
                    if wanted(event) { return events }
                }
            }
        }
        return events
    }

    /// How long a daemon that does not say how soon it answers a check
    /// (one that predates ``DaemonCheck``) is given.
    static let unannouncedCheckAllowance: Duration = .seconds(30)

    /// Asks one daemon for its connectivity check. A `get` goes first: the
    /// daemon answers it at once, so a stopped one costs the budget, not the
    /// check's time, and its status says how soon the check is answered
    /// (``DaemonCheck/answerWithin``), which is awaited, and a second more.
    private static func check(
        _ detail: StatusDetail, on connection: DaemonConnection, _ link: inout DaemonLink,
        by deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(DaemonClientError) -> (NetworkStatus, [[UInt8]]) {
        let current = try firstStatus(.get, detail, on: connection, &link, by: deadline, timeout: timeout).status
        // Only now: a status line still unread is replaced by a newer one,
        // so an answer at once would take the place of the get's.
        try connection.send([ClientRequest(.check, detail: detail)])
        // A daemon with no check answers at once all the same.
        let allowance = (current.check?.answerWithin ?? unannouncedCheckAllowance) + .seconds(1)
        let checked = try status(from: connection, &link, by: .now + allowance, timeout: allowance)
        let (status, line) = StatusUpdate.inDetail(checked, detail)
        return (status, [line])
    }

    /// Asks one daemon, at most ``window`` `reach` requests in flight, each
    /// tagged with its position. A `get` goes first: the daemon answers it at
    /// once, so a stopped one costs the budget, not the resolver's allowance
    /// that names are given afterwards.
    private static func reach(
        _ destinations: [Destination], family: AddressFamily?, on connection: DaemonConnection, _ link: inout DaemonLink,
        by deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(DaemonClientError) -> ([DestinationStatus], [[UInt8]]) {
        // The reach requests go only after this answer: nothing comes behind it.
        _ = try firstStatus(.get, .summary, on: connection, &link, by: deadline, timeout: timeout)
        let namesBy = ContinuousClock.now + timeout + resolutionAllowance
        var answers = [(status: DestinationStatus, line: [UInt8])?](repeating: nil, count: destinations.count)
        var sent = 0
        var answered = 0
        while answered < destinations.count {
            let batch = sent..<min(destinations.count, answered + window)
            if !batch.isEmpty {
                try connection.send(batch.map {
                    ClientRequest(.reach, destination: destinations[$0], id: String($0), family: family)
                })
                sent = batch.upperBound
            }
            let events = try events(from: connection, &link, by: namesBy, timeout: timeout + resolutionAllowance)
            for case .destination(let id, let status, let line) in events {
                guard let position = Int(id), answers.indices.contains(position), answers[position] == nil else { continue }
                answers[position] = (status, line)
                answered += 1
            }
        }
        let complete = answers.map { $0! }
        return (complete.map(\.status), complete.map(\.line))
    }

    /// Computed in-process by a session that follows the destinations
    /// until each has an answer other than `pending`.
    private func inProcess(
        _ destinations: [Destination], family: AddressFamily?, daemonFailures: [DaemonClientError]
    ) throws(ReachabilityError) -> [DestinationStatus] {
        var configuration = FollowSession.Configuration(source: .inProcess, socketPaths: [], statusDetail: nil)
        configuration.retryingInProcess = false
        let session = try FollowSession(configuration, logger: Logger(label: "reachd.query"))
        let keys = destinations.map { DestinationKey($0, uid: nil, family: family) }
        for key in keys { session.remote.follow(key) }
        var answers: [DestinationKey: DestinationStatus] = [:]
        do throws(ReachabilityError) {
            try session.run { update in
                if case .destination(let key, let status, _) = update, status.state.isSettled { answers[key] = status }
                return answers.count < Set(keys).count
            }
        } catch {
            // Netlink failed in a way reopening did not mend.
            guard case .inProcessFailed(let failure, _) = error else { throw error }
            throw .inProcessFailed(failure, daemonFailures: daemonFailures)
        }
        return keys.map { answers[$0]! }
    }
}
