import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's event loop: one thread polling the netlink socket, the listening
/// socket, a stop signal and every client. Nothing in it has a timeout unless
/// systemd's watchdog asks for pings: an idle daemon sleeps in one `poll` call.
/// The pings come from this loop, so a hung loop is caught.
///
/// Written by hand on `poll(2)`: SwiftNIO cannot register a netlink descriptor,
/// and a single thread keeps every piece of state lock-free. `poll` rather than
/// epoll because Swift's Glibc module does not export epoll, and at the client
/// limit below rebuilding the descriptor list per wake-up costs microseconds.
final class DaemonServer {
    /// Connections accepted per wake-up, so a connect flood waits its turn too.
    static let acceptsPerWakeup = 64
    /// How often one client may make the connectivity check run; asking more
    /// often waits for the check under way or the last answer.
    static let checkInterval: Duration = .seconds(5)

    private let watcher: NetworkWatcher
    private let listener: ListeningSocket
    private let stop: WakeSignal
    private let logger: Logger
    private let systemd: SystemdNotifier
    private let limits: ClientLimits
    /// The connectivity check, when configured.
    private let checker: ConnectivityChecker?
    /// Clients that asked for a check and wait for its answer.
    private var checkWaiters: [(client: ClientConnection, detail: StatusDetail)] = []
    private var nextWatchdogPing: ContinuousClock.Instant?
    private var netlinkDescriptor: Int32
    private var clients: [Int32: ClientConnection] = [:]
    private var clientsPerUser: [UInt32: Int] = [:]
    /// The published status, encoded once per change in each form.
    private var published: PublishedLines
    /// The last status logged, to say what the next one changed.
    private var lastAnnounced: NetworkStatus?
    /// Held open so that, out of descriptors, one can be freed to accept a
    /// connection and answer it `too_many_clients` rather than leave it queued
    /// (the trick dbus-broker and libevent servers use).
    private var spareDescriptor: Int32 = -1
    /// Out of descriptors even with the spare: stop polling the listener,
    /// which would stay readable and spin the loop, until a client leaves.
    private var acceptPaused = false
    /// Refusals are logged once until a client leaves, not once per attempt.
    private var refusalLogged = false

    /// Subscribes to netlink, takes the first snapshot, then listens (binding
    /// `socketPath`, or adopting the socket systemd passed) and tells systemd
    /// it is ready: the first client is always answered from a consistent state.
    init(
        socketPath: String, passedSocket: Int32?, limits: ClientLimits, check: ConnectivityCheck?,
        meteredOverrides: [String: Bool], stop: WakeSignal, systemd: SystemdNotifier, logger: Logger
    ) throws {
        self.stop = stop
        self.logger = logger
        self.systemd = systemd
        self.limits = limits
        watcher = try NetworkWatcher(source: .daemon, logger: logger)
        watcher.meteredOverrides = meteredOverrides
        let checker = try check.map { try ConnectivityChecker(check: $0, logger: logger) }
        self.checker = checker
        if let checker {
            watcher.connectivity = { ipv4, ipv6 in checker.connectivity(ipv4: ipv4, ipv6: ipv6, now: .now) }
        }
        let first = try watcher.start()
        published = PublishedLines(first)
        listener = try passedSocket.map { ListeningSocket(passed: $0, path: socketPath) }
            ?? ListeningSocket(path: socketPath)
        netlinkDescriptor = watcher.fileDescriptor
        spareDescriptor = Self.openSpareDescriptor()
        logger.info("listening", metadata: [
            "socket.path": "\(socketPath)", "socket.activated": "\(passedSocket != nil)",
            "clients.max": "\(limits.maxClients)", "clients.max_per_user": "\(limits.maxClientsPerUser)",
            "clients.idle_timeout": "\(limits.idleTimeout)",
            "check.url": "\(check?.url ?? "off")",
        ])
        announce(first)
        systemd.ready(status: StatusFormatter.oneLine(first))
        nextWatchdogPing = systemd.watchdogInterval.map { .now + $0 }
    }

    /// Serves until the stop signal fires, then closes every client and removes
    /// the socket.
    func run() throws {
        defer { shutDown() }
        var descriptors: [pollfd] = []
        var polledClients: [ClientConnection] = []
        while true {
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: stop.fileDescriptor, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: netlinkDescriptor, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: listener.fd, events: acceptPaused ? 0 : Int16(POLLIN), revents: 0))
            // A negative descriptor is ignored by poll: no checker, no entry.
            descriptors.append(pollfd(fd: checker?.wake.fileDescriptor ?? -1, events: Int16(POLLIN), revents: 0))
            polledClients = Array(clients.values)
            // Work that no descriptor will announce: requests already read and
            // waiting their turn, and the next idle client to close.
            var anyReady = false
            var nextIdleDeadline: ContinuousClock.Instant?
            for client in polledClients {
                descriptors.append(pollfd(fd: client.fd, events: client.pollEvents, revents: 0))
                anyReady = anyReady || client.isReady
                if let deadline = client.idleDeadline(after: limits.idleTimeout) {
                    nextIdleDeadline = min(nextIdleDeadline ?? deadline, deadline)
                }
            }
            let deadlines = [nextWatchdogPing, nextIdleDeadline, checker?.nextDeadline].compactMap { $0 }
            let timeout = anyReady ? 0 : pollTimeout(until: deadlines.min())
            guard poll(&descriptors, nfds_t(descriptors.count), timeout) >= 0 else {
                if errno == EINTR { continue }
                throw SystemError("poll")
            }
            let now = ContinuousClock.now
            pingWatchdogIfDue(now)
            if descriptors[0].revents != 0 { return }
            if descriptors[1].revents != 0 { try handleNetlink() }
            if descriptors[2].revents != 0 { acceptClients(now) }
            if let checker {
                if descriptors[3].revents != 0, checker.collect(now: now), let status = watcher.refreshConnectivity() {
                    publish(status)
                }
                // After netlink: a path that just changed is probed at once.
                checker.startDueProbes(now: now)
                if !checkWaiters.isEmpty, !checker.isBusy(now: now) { answerCheckWaiters(now) }
            }
            for (client, ready) in zip(polledClients, descriptors.dropFirst(4)) {
                // Dropped earlier in this pass: its number may already belong to a new client.
                guard clients[client.fd] === client else { continue }
                if ready.revents != 0 {
                    handle(ready.revents, from: client, now)
                } else if client.isReady {
                    serve(client, now)
                } else if let deadline = client.idleDeadline(after: limits.idleTimeout), now >= deadline {
                    logger.debug("closing an idle client", metadata: ["client.user": "\(client.user)"])
                    drop(client)
                }
            }
        }
    }

    /// Milliseconds until `deadline` (rounded up), or -1 (no timeout) without one.
    private func pollTimeout(until deadline: ContinuousClock.Instant?) -> Int32 {
        deadline.map(pollMilliseconds(until:)) ?? -1
    }

    private func pingWatchdogIfDue(_ now: ContinuousClock.Instant) {
        guard let due = nextWatchdogPing, let interval = systemd.watchdogInterval, now >= due else {
            return
        }
        systemd.watchdog()
        nextWatchdogPing = now + interval
    }

    private func handle(_ events: Int16, from client: ClientConnection, _ now: ContinuousClock.Instant) {
        // A full hang-up or an error: nobody is left to answer.
        if events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
            drop(client)
            return
        }
        if events & Int16(POLLOUT) != 0, !client.flush(now: now) {
            drop(client)
            return
        }
        if events & Int16(POLLIN) != 0, !client.read(now: now) {
            drop(client)
            return
        }
        serve(client, now)
    }

    /// Answers up to ``ClientLimits/requestsPerWakeup`` queued requests, stopping
    /// early when an answer could not be written in full (backpressure).
    private func serve(_ client: ClientConnection, _ now: ContinuousClock.Instant) {
        var served = 0
        while served < limits.requestsPerWakeup, client.isReady, let request = client.nextRequest() {
            served += 1
            switch request {
            case .success(let request):
                switch request.operation {
                case .get:
                    deliver(published.line(request.detail), to: client, now)
                case .subscribe:
                    client.subscribe(request.detail)
                    deliver(published.line(request.detail), to: client, now)
                case .check:
                    requestCheck(for: client, detail: request.detail, now)
                }
            case .failure(let error):
                logger.debug("rejected a client request", metadata: ["error": "\(error.message)"])
                let line = DaemonMessage.error(code: "bad_request", message: error.message).line()
                if !client.close(with: line, now: now) { drop(client) }
            }
            guard clients[client.fd] === client else { return }
        }
        if client.isFinished { drop(client) }
    }

    /// Runs the connectivity check now for `client`, which is answered with the
    /// status once it has run. Without a check, or with no family online to
    /// probe, the answer is the status as it is. A client asking more often
    /// than ``checkInterval`` joins the check under way, or gets the last answer.
    private func requestCheck(for client: ClientConnection, detail: StatusDetail, _ now: ContinuousClock.Instant) {
        guard let checker else {
            deliver(published.line(detail), to: client, now)
            return
        }
        if client.lastCheck.map({ now - $0 >= Self.checkInterval }) ?? true {
            client.lastCheck = now
            checker.checkNow(now: now)
            checker.startDueProbes(now: now)
        }
        guard checker.isBusy(now: now) else {
            deliver(published.line(detail), to: client, now)
            return
        }
        client.awaitsCheck = true
        checkWaiters.append((client, detail))
    }

    private func answerCheckWaiters(_ now: ContinuousClock.Instant) {
        let waiters = checkWaiters
        checkWaiters.removeAll()
        for (client, detail) in waiters where clients[client.fd] === client {
            client.awaitsCheck = false
            deliver(published.line(detail), to: client, now)
        }
    }

    private func handleNetlink() throws {
        do {
            if let status = try watcher.handleReadable() { publish(status) }
        } catch {
            logger.error("netlink failed; reopening its sockets and resynchronising",
                         metadata: ["error": "\(error)"])
            let status = try watcher.reopen()
            netlinkDescriptor = watcher.fileDescriptor
            if let status { publish(status) }
        }
    }

    private func publish(_ status: NetworkStatus) {
        let summaryChanged = published.update(status)
        let now = ContinuousClock.now
        for client in clients.values where client.isSubscribed && (client.detail == .full || summaryChanged) {
            deliver(published.line(client.detail), to: client, now)
        }
        // Subscribers first: the log line and systemd's STATUS= cost about
        // 0.1 ms, which no subscriber should wait for.
        announce(status)
    }

    private func announce(_ status: NetworkStatus) {
        // One timestamp per line: the log's (or journald's).
        logger.info("\(StatusFormatter.changeLine(status, since: lastAnnounced, timed: false))")
        lastAnnounced = status
        systemd.status(StatusFormatter.oneLine(status))
    }

    private func acceptClients(_ now: ContinuousClock.Instant) {
        for _ in 0..<Self.acceptsPerWakeup {
            let fd = UnixSocket.accept(from: listener.fd)
            guard fd >= 0 else {
                switch errno {
                case EINTR, ECONNABORTED:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    return
                case EMFILE, ENFILE:
                    guard refuseWithSpareDescriptor() else { return }
                    continue
                case let failure:
                    logger.warning("accept failed; pausing new connections until a client leaves",
                                   metadata: ["error": "\(SystemError("accept", errno: failure))"])
                    acceptPaused = true
                    return
                }
            }
            admit(fd, now)
        }
    }

    private func admit(_ fd: Int32, _ now: ContinuousClock.Instant) {
        // A peer whose credentials cannot be read shares one anonymous bucket.
        let user = UnixSocket.peerUser(fd) ?? UInt32.max
        if let refusal = limits.refusal(clients: clients.count, userClients: clientsPerUser[user, default: 0], user: user) {
            refuse(fd, refusal, user: user)
            return
        }
        clients[fd] = ClientConnection(fd: fd, user: user, now: now)
        clientsPerUser[user, default: 0] += 1
    }

    /// Out of descriptors: frees the spare to accept one connection, answers it
    /// `too_many_clients`, and takes the spare back. Returns `false` when that
    /// is not possible either, and accepting pauses until a client leaves.
    private func refuseWithSpareDescriptor() -> Bool {
        guard spareDescriptor >= 0 else {
            logger.warning("out of file descriptors; pausing new connections until a client leaves")
            acceptPaused = true
            return false
        }
        close(spareDescriptor)
        let fd = UnixSocket.accept(from: listener.fd)
        if fd >= 0 {
            refuse(fd, "the daemon is out of file descriptors; try again later", user: UnixSocket.peerUser(fd))
        }
        spareDescriptor = Self.openSpareDescriptor()
        return fd >= 0
    }

    /// Answers `too_many_clients` and closes. The line fits in a new socket's
    /// empty buffer, so the write never blocks.
    private func refuse(_ fd: Int32, _ message: String, user: UInt32?) {
        if !refusalLogged {
            logger.warning("refusing connections", metadata: ["reason": "\(message)", "client.user": "\(user.map(String.init) ?? "?")"])
            refusalLogged = true
        }
        let line = DaemonMessage.error(code: "too_many_clients", message: message).line()
        _ = line.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        close(fd)
    }

    private func deliver(_ line: [UInt8], to client: ClientConnection, _ now: ContinuousClock.Instant) {
        if !client.send(line, now: now) { drop(client) }
    }

    private func drop(_ client: ClientConnection) {
        if client.awaitsCheck { checkWaiters.removeAll { $0.client === client } }
        acceptPaused = false
        refusalLogged = false
        clients[client.fd] = nil
        let left = clientsPerUser[client.user, default: 1] - 1
        clientsPerUser[client.user] = left > 0 ? left : nil
        close(client.fd)
    }

    private static func openSpareDescriptor() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    private func shutDown() {
        systemd.stopping()
        for client in clients.values { drop(client) }
        listener.close()
        logger.info("stopped", metadata: ["socket.path": "\(listener.path)"])
    }
}
