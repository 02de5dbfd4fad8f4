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
    /// Connections beyond this are refused, so clients cannot exhaust the daemon.
    static let clientLimit = 1024

    private let watcher: NetworkWatcher
    private let listener: ListeningSocket
    private let stop: WakeSignal
    private let logger: Logger
    private let systemd: SystemdNotifier
    private var nextWatchdogPing: ContinuousClock.Instant?
    private var netlinkDescriptor: Int32
    private var clients: [Int32: ClientConnection] = [:]
    private var statusLine: [UInt8]
    /// Out of descriptors (EMFILE): stop polling the listener, which would stay
    /// readable and spin the loop, until a client leaves.
    private var acceptPaused = false

    /// Subscribes to netlink, takes the first snapshot, then binds the socket,
    /// so the first client is always answered from a consistent state.
    /// Subscribes to netlink, takes the first snapshot, then listens (binding
    /// `socketPath`, or adopting the socket systemd passed) and tells systemd
    /// it is ready: the first client is always answered from a consistent state.
    init(socketPath: String, passedSocket: Int32?, stop: WakeSignal, systemd: SystemdNotifier, logger: Logger) throws {
        self.stop = stop
        self.logger = logger
        self.systemd = systemd
        watcher = try NetworkWatcher(source: .daemon, logger: logger)
        let first = try watcher.start()
        statusLine = DaemonMessage.status(first).line()
        listener = try passedSocket.map { ListeningSocket(passed: $0, path: socketPath) }
            ?? ListeningSocket(path: socketPath)
        netlinkDescriptor = watcher.fileDescriptor
        logger.info("listening", metadata: [
            "socket.path": "\(socketPath)", "socket.activated": "\(passedSocket != nil)",
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
            polledClients = Array(clients.values)
            for client in polledClients {
                descriptors.append(pollfd(fd: client.fd, events: client.pollEvents, revents: 0))
            }
            guard poll(&descriptors, nfds_t(descriptors.count), pollTimeout()) >= 0 else {
                if errno == EINTR { continue }
                throw SystemError("poll")
            }
            pingWatchdogIfDue()
            if descriptors[0].revents != 0 { return }
            if descriptors[1].revents != 0 { try handleNetlink() }
            if descriptors[2].revents != 0 { acceptClients() }
            for (client, ready) in zip(polledClients, descriptors.dropFirst(3)) where ready.revents != 0 {
                // Dropped earlier in this pass: its number may already belong to a new client.
                guard clients[client.fd] === client else { continue }
                handle(ready.revents, from: client)
            }
        }
    }

    /// -1 (no timeout) unless the watchdog wants a ping: then until it is due.
    private func pollTimeout() -> Int32 {
        guard let due = nextWatchdogPing else { return -1 }
        let left = due - .now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    private func pingWatchdogIfDue() {
        guard let due = nextWatchdogPing, let interval = systemd.watchdogInterval, ContinuousClock.now >= due else {
            return
        }
        systemd.watchdog()
        nextWatchdogPing = .now + interval
    }

    private func handle(_ events: Int16, from client: ClientConnection) {
        // Input first: it may hold the requests sent just before a hang-up.
        if !client.inputClosed, events & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            handleInput(from: client)
        } else if events & Int16(POLLHUP | POLLERR) != 0 {
            drop(client)
        }
        if events & Int16(POLLOUT) != 0, clients[client.fd] === client { flush(client) }
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
        statusLine = DaemonMessage.status(status).line()
        announce(status)
        for client in clients.values where client.isSubscribed {
            deliver(statusLine, to: client)
        }
    }

    private func announce(_ status: NetworkStatus) {
        logger.info("\(StatusFormatter.changeLine(status))", metadata: ["status.seq": "\(status.seq)"])
        systemd.status(StatusFormatter.oneLine(status))
    }

    private func acceptClients() {
        while true {
            let fd = accept(listener.fd, nil, nil)
            guard fd >= 0 else {
                switch errno {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    return
                case let failure:
                    // EMFILE and the like: leave the rest queued until a client leaves.
                    logger.warning("accept failed; pausing new connections until a client leaves",
                                   metadata: ["error": "\(SystemError("accept", errno: failure))"])
                    acceptPaused = true
                    return
                }
            }
            guard clients.count < Self.clientLimit else {
                let message = DaemonMessage.error(
                    code: "too_many_clients",
                    message: "the daemon serves at most \(Self.clientLimit) clients; try again later")
                _ = ClientConnection(fd: fd).send(message.line())
                close(fd)
                continue
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            clients[fd] = ClientConnection(fd: fd)
        }
    }

    private func handleInput(from client: ClientConnection) {
        switch client.readRequests() {
        case .failed:
            drop(client)
        case .requests(let requests):
            for request in requests {
                switch request {
                case .success(.get):
                    deliver(statusLine, to: client)
                case .success(.subscribe):
                    client.subscribe()
                    deliver(statusLine, to: client)
                case .failure(let error):
                    reject(client, error)
                    return
                }
                guard clients[client.fd] === client else { return }
            }
            if client.isFinished { drop(client) }
        }
    }

    /// Answers a bad request with an error line, then closes the connection.
    private func reject(_ client: ClientConnection, _ error: RequestError) {
        logger.debug("rejected a client request", metadata: ["error": "\(error.message)"])
        // A half-written status would garble the error line; such a client
        // gets only the close.
        if !client.hasPendingOutput {
            _ = client.send(DaemonMessage.error(code: "bad_request", message: error.message).line())
        }
        drop(client)
    }

    private func deliver(_ line: [UInt8], to client: ClientConnection) {
        if !client.send(line) { drop(client) }
    }

    private func flush(_ client: ClientConnection) {
        if !client.flush() || client.isFinished { drop(client) }
    }

    private func drop(_ client: ClientConnection) {
        acceptPaused = false
        clients[client.fd] = nil
        close(client.fd)
    }

    private func shutDown() {
        systemd.stopping()
        for client in clients.values { drop(client) }
        listener.close()
        logger.info("stopped", metadata: ["socket.path": "\(listener.path)"])
    }
}
