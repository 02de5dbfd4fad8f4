import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// Who answers what a client asks: the server, which owns the status and
/// the services a request may need (the check, the destinations).
protocol ClientRequestHandler: AnyObject {
    /// A well-formed request from `client`, in its turn.
    func answer(_ request: ClientRequest, from client: ClientConnection, _ now: ContinuousClock.Instant)
    /// `client` is gone: what other services hold for it goes too.
    func clientLeft(_ client: ClientConnection)
}

/// The clients of the Unix socket, as a service of the daemon's loop: who
/// is let in (``ClientAdmission``), who is connected (``ClientTable``), each
/// one's reads and writes in the event poll, its requests in turn, and
/// idle ones closed.
///
/// No client can starve the others: each is served at most
/// ``ClientLimits/requestsPerWakeup`` requests per pass, and one whose
/// answers are unread is not read (backpressure); what is left waits for
/// the next pass, which then needs no wait.
final class ClientService {
    private let admission: ClientAdmission
    private let table = ClientTable()
    private let limits: ClientLimits
    private let poll: EventPoll<DaemonEventToken>
    private let logger: Logger
    /// Whether the loop waits on the listener: not while it is paused.
    private var listenerWaited = true
    weak var handler: ClientRequestHandler?

    /// - Parameter network: the daemon's network namespace, which a client's
    ///   must be for its `reach` and `watch` to be answered.
    init(
        listener: ListeningSocket, limits: ClientLimits, network: NetworkNamespace?, poll: EventPoll<DaemonEventToken>,
        logger: Logger
    ) throws(SystemError) {
        admission = ClientAdmission(listener: listener, limits: limits, network: network, logger: logger)
        self.limits = limits
        self.poll = poll
        self.logger = logger
        try poll.add(listener.fd, .listener, interest: .readable)
    }

    /// Connections refused since the daemon started.
    var refusedCount: Int { admission.refusedCount }

    /// The socket's path, for the log.
    var socketPath: String { admission.listener.path }

    /// Requests already read wait their turn: the next pass needs no wait.
    var hasWaiting: Bool { table.hasWaiting }

    /// When a client that has not subscribed is idle too long.
    var idleDeadline: ContinuousClock.Instant? { table.nextIdleDeadline(after: limits.idleTimeout) }

    /// When the paused listener is tried again.
    var pausedUntil: ContinuousClock.Instant? { admission.acceptor.pausedUntil }

    var subscriberCount: Int { table.subscribers(.full).count + table.subscribers(.summary).count }

    func subscribers(_ detail: StatusDetail) -> [ClientConnection] { table.subscribers(detail) }

    func contains(_ client: ClientConnection) -> Bool { table.contains(client) }

    func subscribe(_ client: ClientConnection, _ detail: StatusDetail) { table.subscribe(client, detail) }

    /// A pass begins: the clients whose requests wait their turn, served after
    /// those that are ready (``serve(waiting:_:)``).
    func takeWaiting() -> [ClientConnection] { table.takeWaiting() }

    /// A client's descriptor is ready.
    func handle(_ serial: UInt64, _ event: ReadinessEvent<DaemonEventToken>, _ now: ContinuousClock.Instant) {
        // Dropped earlier in this pass.
        guard let client = table.client(serial) else { return }
        if event.failed {
            // A request written just before the hang-up still counts (an
            // app's failure report sends `check` and closes at once): what
            // one read brings is served, the answers dropped with the client.
            if event.readable, client.read(now: now) { serve(client, now) }
            drop(client)
            return
        }
        if event.writable, !client.flush(now: now) {
            drop(client)
            return
        }
        if event.readable, !client.read(now: now) {
            drop(client)
            return
        }
        serve(client, now)
    }

    func serve(waiting: [ClientConnection], _ now: ContinuousClock.Instant) {
        for client in waiting where table.contains(client) { serve(client, now) }
    }

    /// Closes the clients idle too long, when that is due: finding them walks
    /// every client that has not subscribed.
    func closeIdle(due: ContinuousClock.Instant?, _ now: ContinuousClock.Instant) {
        guard let due, now >= due else { return }
        for client in table.idle(at: now, after: limits.idleTimeout) {
            logger.debug("closing an idle client", metadata: ["client.user": "\(client.user)"])
            drop(client)
        }
    }

    /// Takes the connections waiting (a bounded number per wake-up); new
    /// connections wait behind the clients already served.
    func acceptWaiting(_ now: ContinuousClock.Instant) {
        for client in admission.acceptWaiting(into: table, now) {
            do { try poll.add(client.fd, .client(client.token), interest: client.registeredInterest) } catch {
                logger.warning("could not wait on a new client; closing it", metadata: ["error": "\(error)"])
                drop(client)
            }
        }
    }

    /// Once per pass: waits on the listener unless it is paused.
    func updateListener(_ now: ContinuousClock.Instant) {
        if admission.acceptor.pauseIsOver(at: now) { admission.resume() }
        do { try poll.follow(admission.acceptor, as: .listener, waited: &listenerWaited) } catch {
            logger.error("cannot wait for connections", metadata: ["error": "\(error)"])
        }
    }

    /// Sends `line` on `stream`; a client that can't take it goes.
    func deliver(
        _ line: [UInt8], to client: ClientConnection, _ now: ContinuousClock.Instant,
        stream: ClientConnection.OutputStream = .status
    ) {
        if !client.send(line, stream: stream, now: now) { drop(client) }
    }

    /// Sends a status line of `kind`; a client that can't take it goes.
    func deliverStatus(_ line: [UInt8], _ kind: ClientConnection.StatusLine, to client: ClientConnection, _ now: ContinuousClock.Instant) {
        if !client.send(line, status: kind, now: now) { drop(client) }
    }

    /// After answers, in turn or later than their request: a client that has
    /// said all it will (`printf '{"op":"check"}' | socat ...`) and has been
    /// answered in full goes; any other waits for what is left to write, and
    /// its requests queued behind the answers are served in turn.
    func settle(_ client: ClientConnection) {
        guard table.contains(client) else { return }
        if client.isFinished {
            drop(client)
            return
        }
        table.setWaiting(client, client.isReady)
        updateInterest(of: client)
    }

    /// Tells the event poll what `client` waits for now, when that changed.
    func updateInterest(of client: ClientConnection) {
        let interest = client.interest
        guard interest != client.registeredInterest else { return }
        do {
            try poll.modify(client.fd, .client(client.token), interest: interest)
            client.registeredInterest = interest
        } catch {
            drop(client)
        }
    }

    func drop(_ client: ClientConnection) {
        guard table.contains(client) else { return }
        handler?.clientLeft(client)
        table.remove(client)
        // A descriptor frees: a listener paused for want of one goes on (the
        // pass's end waits on it again).
        admission.resume()
        // Closing takes it out of the event poll too.
        close(client.fd)
    }

    /// The daemon stops: every client goes, and the socket with them.
    func closeAll() {
        for client in Array(table.all) { drop(client) }
        admission.listener.close()
    }

    /// Answers up to ``ClientLimits/requestsPerWakeup`` queued requests, stopping
    /// early when an answer could not be written in full (backpressure).
    private func serve(_ client: ClientConnection, _ now: ContinuousClock.Instant) {
        var served = 0
        while served < limits.requestsPerWakeup, client.isReady, let request = client.nextRequest() {
            served += 1
            switch request {
            case .success(let request):
                handler?.answer(request, from: client, now)
            case .failure(let error):
                logger.debug("rejected a client request", metadata: ["error": "\(error.message)"])
                if error.closesConnection {
                    if !client.close(with: error.line, now: now) { drop(client) }
                } else {
                    deliver(error.line, to: client, now, stream: .answer)
                }
            }
            guard table.contains(client) else { return }
        }
        settle(client)
    }
}

extension ClientService: DaemonService {
    var nextDeadline: ContinuousClock.Instant? { Deadline.earliest(idleDeadline, pausedUntil) }

    func endPass(_ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) { updateListener(now) }
}
