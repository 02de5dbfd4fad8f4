import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's event loop: one thread polling the netlink socket, the listening
/// socket, a stop signal and every client. Nothing in it has a timeout: an idle
/// daemon sleeps in one `poll` call.
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
    private let onPublish: (NetworkStatus) -> Void
    private var netlinkDescriptor: Int32
    private var clients: [Int32: ClientConnection] = [:]
    private var statusLine: [UInt8]

    /// Subscribes to netlink, takes the first snapshot, then binds the socket,
    /// so the first client is always answered from a consistent state.
    init(
        socketPath: String, stop: WakeSignal, logger: Logger,
        onPublish: @escaping (NetworkStatus) -> Void
    ) throws {
        self.stop = stop
        self.logger = logger
        self.onPublish = onPublish
        watcher = try NetworkWatcher(source: .daemon, logger: logger)
        let first = try watcher.start()
        statusLine = DaemonMessage.status(first).line()
        listener = try ListeningSocket(path: socketPath)
        netlinkDescriptor = watcher.fileDescriptor
        logger.info("listening", metadata: ["socket.path": "\(socketPath)"])
        announce(first)
    }

    /// Serves until the stop signal fires, then closes every client and removes
    /// the socket.
    func run() throws {
        defer { shutDown() }
        var descriptors: [pollfd] = []
        while true {
            descriptors.removeAll(keepingCapacity: true)
            for fd in [stop.fileDescriptor, netlinkDescriptor, listener.fd] {
                descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
            }
            for client in clients.values {
                descriptors.append(pollfd(fd: client.fd, events: client.pollEvents, revents: 0))
            }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) >= 0 else {
                if errno == EINTR { continue }
                throw SystemError("poll")
            }
            for ready in descriptors where ready.revents != 0 {
                switch ready.fd {
                case stop.fileDescriptor:
                    return
                case netlinkDescriptor:
                    try handleNetlink()
                case listener.fd:
                    acceptClients()
                default:
                    guard let client = clients[ready.fd] else { continue }
                    // Input first: it may hold the requests sent just before a hang-up.
                    if !client.inputClosed, ready.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                        handleInput(from: client)
                    } else if ready.revents & Int16(POLLHUP | POLLERR) != 0 {
                        drop(client)
                    }
                    if ready.revents & Int16(POLLOUT) != 0, clients[ready.fd] != nil { flush(client) }
                }
            }
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
        statusLine = DaemonMessage.status(status).line()
        announce(status)
        for client in clients.values where client.isSubscribed {
            deliver(statusLine, to: client)
        }
    }

    private func announce(_ status: NetworkStatus) {
        logger.info("\(StatusFormatter.changeLine(status))", metadata: ["status.seq": "\(status.seq)"])
        onPublish(status)
    }

    private func acceptClients() {
        while true {
            let fd = accept(listener.fd, nil, nil)
            guard fd >= 0 else {
                if errno == EINTR { continue }
                // EAGAIN: all accepted. EMFILE and the like: leave them queued
                // until a client leaves rather than spin.
                if errno != EAGAIN && errno != EWOULDBLOCK {
                    logger.warning("accept failed", metadata: ["error": "\(SystemError("accept"))"])
                }
                return
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
                guard clients[client.fd] != nil else { return }
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
        clients[client.fd] = nil
        close(client.fd)
    }

    private func shutDown() {
        for client in clients.values { drop(client) }
        listener.close()
        logger.info("stopped", metadata: ["socket.path": "\(listener.path)"])
    }
}
