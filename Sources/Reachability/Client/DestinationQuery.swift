/// Destination answers: from the first daemon that answers, else (where the
/// source allows) computed in-process. The synchronous core of
/// ``ReachabilityMonitor/reachability(of:family:source:socketPath:timeout:)``,
/// ``ReachabilityMonitor/reachability(of:family:)`` and
/// `reachd reach`.
package struct DestinationQuery: Sendable {
    package var source: ReachabilityMonitor.Source
    package var socketPaths: [String]
    /// Only this family's addresses; `nil`: both.
    package var family: AddressFamily?

    /// `reach` requests one connection has in flight: under the daemon's
    /// limit per connection, whatever that is set to.
    static let window = 16
    /// How long a daemon may take to answer a name: its resolver's timeout,
    /// and some.
    static let resolutionAllowance: Duration = .seconds(6)

    package init(source: ReachabilityMonitor.Source, socketPaths: [String], family: AddressFamily? = nil) {
        self.source = source
        self.socketPaths = socketPaths
        self.family = family
    }

    /// One answer per destination, in order. A daemon that accepted the
    /// connection has `timeout` plus its resolver's timeout to answer: names
    /// are answered once resolved.
    package func answer(
        _ destinations: [Destination], timeout: Duration = DaemonClient.defaultTimeout
    ) throws(StatusQueryError) -> DestinationAnswers {
        var failures: [DaemonClientError] = []
        if source != .embedded {
            for path in socketPaths {
                do throws(DaemonClientError) {
                    var answers = try ask(path, destinations, timeout: timeout)
                    answers.daemonFailures = failures
                    return answers
                } catch {
                    failures.append(error)
                }
            }
        }
        guard source != .daemon else { throw .noDaemonAnswered(failures) }
        do throws(NetlinkError) {
            var statuses = [DestinationStatus?](repeating: nil, count: destinations.count)
            let monitor = try EmbeddedDestinationMonitor(destinations, family: family)
            try monitor.run { position, status in
                if status.state != .pending { statuses[position] = status }
                return statuses.contains(nil)
            }
            return DestinationAnswers(statuses: statuses.map { $0! }, lines: nil, daemonFailures: failures)
        } catch {
            throw .inProcessFailed(error, daemonFailures: failures)
        }
    }

    /// Asks one daemon over one connection, at most ``window`` requests in
    /// flight, each tagged with its position. A `get` goes first: the daemon
    /// answers it at once, so a stopped one costs `timeout`, not the
    /// resolver's allowance that names are given afterwards.
    private func ask(
        _ path: String, _ destinations: [Destination], timeout: Duration
    ) throws(DaemonClientError) -> DestinationAnswers {
        let connection = try DaemonConnection(path: path, timeout: timeout)
        defer { connection.close() }
        try connection.send(.get)
        var reader = DaemonLineReader()
        // The reach requests go only after this answer: nothing comes behind it.
        guard try connection.nextStatus(&reader, deadline: .now + timeout, timeout: timeout) != nil else {
            throw .closed(path: path)
        }
        let deadline = ContinuousClock.now + timeout + Self.resolutionAllowance
        var statuses = [DestinationStatus?](repeating: nil, count: destinations.count)
        var lines = [[UInt8]?](repeating: nil, count: destinations.count)
        var sent = 0
        var answered = 0
        while answered < destinations.count {
            let batch = sent..<min(destinations.count, answered + Self.window)
            if !batch.isEmpty {
                try connection.send(batch.map {
                    ClientRequest(.reach, destination: destinations[$0], id: String($0), family: family)
                })
                sent = batch.upperBound
            }
            guard let received = try connection.nextLines(&reader, deadline: deadline, timeout: timeout) else {
                throw .closed(path: path)
            }
            for line in received {
                guard let (position, status) = try DaemonClient.destinationAnswer(from: line, among: destinations.count),
                    statuses[position] == nil
                else { continue }
                statuses[position] = status
                lines[position] = line
                answered += 1
            }
        }
        return DestinationAnswers(
            statuses: statuses.map { $0! }, lines: lines.map { $0! }, daemonFailures: [])
    }
}

/// Destination answers, and where they came from.
package struct DestinationAnswers: Sendable {
    package var statuses: [DestinationStatus]
    /// The daemon's lines as received (what `reach --json` prints); `nil`
    /// when computed in-process.
    package var lines: [[UInt8]]?
    /// Why each daemon tried before the answer did not give it.
    package var daemonFailures: [DaemonClientError]
}
