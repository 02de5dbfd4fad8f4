/// What a line from a daemon means, before a ``FollowSession`` or a
/// ``OneShotQuery`` acts on it. Until the daemon's first status says it
/// serves this network, it is not trusted: its answers about destinations
/// are held until then, and a first status from another network namespace
/// fails the link. Pure: lines in, link events out; the connection's own
/// namespace is a value its reader read.
struct DaemonLink: Equatable {
    /// What a line from the daemon means.
    enum Event: Equatable {
        /// A change on a subscription that has answered, passed on as it
        /// came, not decoded yet (reachd monitor --json prints it before).
        case news(StatusUpdate)
        /// The first status: the daemon answers, for this network.
        case answered(NetworkStatus, line: [UInt8])
        /// A status that must be compared before it is delivered.
        case status(NetworkStatus, line: [UInt8])
        /// An answer about the destination the session watches under `id`.
        case destination(id: String, DestinationStatus, line: [UInt8])
        /// The daemon refused a request, about the destination under `id` when it says so.
        case refused(DaemonClientError, code: String, id: String?)
        /// The link is no good: a line that does not decode, or a daemon of
        /// another network namespace (`otherNetwork`).
        case failed(DaemonClientError, otherNetwork: Bool)

        /// The status a status event carries, with its line.
        var status: (status: NetworkStatus, line: [UInt8])? {
            switch self {
            case .answered(let status, let line), .status(let status, let line): (status, line)
            case .news, .destination, .refused, .failed: nil
            }
        }
    }

    /// Until the first status arrives: when to give up on it.
    var firstAnswerBy: ContinuousClock.Instant? { answerDue?.instant }
    /// Stored in a fixed layout: a phase holds the link, and the session's
    /// state the phase, all copied at each step (``StoredInstant``).
    private var answerDue: StoredInstant?
    /// Destination answers that came before the first status: they count
    /// once it says the daemon serves this network.
    private var held: [Event] = []

    /// The daemon's socket.
    let path: String
    /// The namespace the connection to it was made in: a first status must
    /// describe it.
    private let ownNetwork: NetworkNamespace?

    init(path: String, ownNetwork: NetworkNamespace?, firstAnswerBy: ContinuousClock.Instant) {
        self.path = path
        self.ownNetwork = ownNetwork
        answerDue = StoredInstant(firstAnswerBy)
    }

    var hasAnswered: Bool { answerDue == nil }

    /// What `line` means. `passesThrough`: the session would deliver the
    /// line as it came, were it a change on a subscription that answered.
    mutating func read(_ line: [UInt8], passesThrough: Bool) -> [Event] {
        if hasAnswered, passesThrough { return [.news(StatusUpdate(line: line))] }
        let message: DaemonMessage
        do throws(DaemonClientError) { message = try DaemonMessage.received(line) } catch {
            return [.failed(error, otherNetwork: false)]
        }
        switch message {
        case .status(let status):
            guard !hasAnswered else { return [.status(status, line: line)] }
            do throws(DaemonClientError) { try DaemonConnection.checkServes(status, network: ownNetwork, path: path) } catch {
                return [.failed(error, otherNetwork: true)]
            }
            answerDue = nil
            defer { held = [] }
            return [.answered(status, line: line)] + held
        case .destination(let status):
            // An answer without an id names nothing the session asked.
            guard let id = status.id else { return [] }
            guard hasAnswered else {
                // Before the first status, nothing says the daemon serves this network.
                held.append(.destination(id: id, status, line: line))
                return []
            }
            return [.destination(id: id, status, line: line)]
        case .error(let code, let text, let id):
            return [.refused(.rejected(code: code, message: text), code: code, id: id)]
        case .unrecognized:
            return []
        }
    }
}
