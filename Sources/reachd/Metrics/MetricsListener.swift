import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP listener for Prometheus: `GET /metrics` (and `HEAD`), one
/// request per connection, answered and closed. Run by the daemon's loop,
/// which waits on ``fd`` and each scraper's descriptor.
///
/// A side job that never stops the main one: a port taken by another process
/// (any user may bind one first) is logged and bound again later, with a
/// backoff, while the daemon serves its socket; under systemd the port can
/// be bound at boot instead (reachd-metrics.socket), and the daemon adopts
/// what it is passed.
///
/// A scraper is a client like any other, and may be hostile: a request head
/// is at most ``MetricsRequest/maxHead`` bytes, all of it within ``deadline`` of the
/// connection (a slow-loris gets no more time by trickling), each wake-up
/// reads at most one buffer from each, and at most ``MetricsSettings/maxScrapers``
/// are held at once. When all are taken, a newcomer takes the slot of the
/// connection that has waited longest without a complete request: a real
/// scraper sends its request as it connects, so idle connections cannot
/// shut it out, whether they come from another address or, as every local
/// process does, from 127.0.0.1. What a request may ask is
/// ``MetricsRequest``'s. Written by hand rather than with
/// an HTTP server package: one verb on one path, inside an epoll loop that
/// already exists, where SwiftNIO would bring a second event loop and
/// threads to a daemon that sleeps in one `epoll_wait`.
final class MetricsListener {
    static let deadline: Duration = .seconds(5)
    /// Binding again after a failure: from a second, doubling up to a minute.
    static let rebind = Backoff(initial: .seconds(1), maximum: .seconds(60))

    /// One scraper's connection.
    final class Scraper {
        let fd: Int32
        let token: UInt64
        let deadline: ContinuousClock.Instant
        fileprivate var request: [UInt8] = []
        /// How much of `request` is known to hold no end of the head.
        fileprivate var scanned = 0
        fileprivate var response: [UInt8] = []
        fileprivate var written = 0
        /// Waits to write the rest of its answer.
        var wantsWrite: Bool { !response.isEmpty }

        fileprivate init(fd: Int32, token: UInt64, deadline: ContinuousClock.Instant) {
            self.fd = fd
            self.token = token
            self.deadline = deadline
        }
    }

    /// Where the listener comes from: an address to bind, or a socket
    /// systemd bound and passed.
    enum Origin {
        case address(MetricsSettings.Address)
        case passed(Int32)
    }

    /// Accepts from the listener; `nil` while the address is not bound.
    private(set) var acceptor: Acceptor?
    var fd: Int32? { acceptor?.fd }
    /// Where it listens, for the log: `127.0.0.1:10077`.
    let address: String
    /// What to bind; `nil` for a socket systemd passed.
    private let bindAddress: MetricsSettings.Address?
    private var bindFailures = 0
    /// When to try binding next; `nil` once bound.
    private var nextBind: ContinuousClock.Instant?
    /// Names a request's `Host` may give besides IP literals.
    private let hostNames: Set<String>
    private let logger: Logger
    private(set) var scrapers: [UInt64: Scraper] = [:]
    private var nextToken: UInt64 = 1
    /// Scrapers refused since the daemon started: out of descriptors, or
    /// beyond the slots.
    private(set) var refusedCount = 0
    /// A pause is logged once until it ends.
    private var pauseLogged = false

    /// - Parameter hosts: names a request's `Host` may give besides IP
    ///   addresses, `localhost` and this machine's name (`[metrics] hosts`).
    init(_ origin: Origin, hosts: [String], logger: Logger) {
        self.logger = logger
        hostNames = Set((["localhost", Self.machineName()] + hosts).map { $0.lowercased() })
        switch origin {
        case .address(let address):
            self.address = address.description
            bindAddress = address
            nextBind = .now
        case .passed(let fd):
            bindAddress = nil
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            address = Self.localAddress(fd)
            acceptor = Acceptor(listener: fd)
        }
    }

    /// Binds the address when it is due (at once, then after each failure's
    /// backoff); ``acceptor`` is there once it is bound.
    func bindIfDue(now: ContinuousClock.Instant) {
        guard let due = nextBind, now >= due, let bindAddress else { return }
        do {
            let fd = try Self.listen(at: bindAddress)
            acceptor = Acceptor(listener: fd)
            nextBind = nil
            if bindFailures > 0 {
                logger.info("serving metrics", metadata: ["metrics.listen": "http://\(address)/metrics", "metrics.bind_failures": "\(bindFailures)"])
            }
        } catch {
            let retry = Self.rebind.delay(attempt: bindFailures)
            // Once, loudly; then only for whoever debugs.
            logger.log(
                level: bindFailures == 0 ? .error : .debug,
                "cannot serve metrics yet; the socket is served meanwhile, and binding is tried again. Free the port, pick another [metrics] listen, or let systemd hold it from boot (systemctl enable --now reachd-metrics.socket)",
                metadata: ["error": "\(error)", "metrics.listen": "\(address)", "metrics.retry_in": "\(retry)"])
            bindFailures += 1
            nextBind = now + retry
        }
    }

    private static func listen(at address: MetricsSettings.Address) throws(SystemError) -> Int32 {
        let domain = address.family == .ipv6 ? AF_INET6 : AF_INET
        let fd = socket(domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SystemError("open a TCP socket for the metrics") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if address.family == .ipv6 {
            // [::] means IPv6 alone: an IPv4 scraper is asked to say 0.0.0.0.
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = in_port_t(UInt16(address.port).bigEndian)
            _ = inet_pton(AF_INET6, address.host, &socketAddress.sin6_addr)
            bound = Self.bind(fd, &socketAddress)
        } else {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = in_port_t(UInt16(address.port).bigEndian)
            _ = inet_pton(AF_INET, address.host, &socketAddress.sin_addr)
            bound = Self.bind(fd, &socketAddress)
        }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let error = SystemError("listen for metrics on \(address)")
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    /// Binds `fd` to a `sockaddr_in` or `sockaddr_in6`.
    private static func bind<Address>(_ fd: Int32, _ address: inout Address) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    /// When something is next due: a scraper's time is up, binding is tried
    /// again, a paused listener is tried again. `nil` with none of them.
    var nextDeadline: ContinuousClock.Instant? {
        Deadline.earliest(scrapers.values.map(\.deadline).min(), nextBind, acceptor?.pausedUntil)
    }

    /// Whether the loop should stop waiting on ``fd``: out of descriptors.
    var isPaused: Bool { acceptor?.isPaused ?? false }

    /// A descriptor freed (a client or a scraper left), or the pause is over.
    func resume() {
        guard let acceptor, acceptor.isPaused else { return }
        acceptor.resume()
        pauseLogged = false
    }

    /// Takes the connections waiting (a bounded number per wake-up): the
    /// scrapers to wait on for reading. A newcomer beyond the slots takes
    /// that of the connection waiting longest without a complete request,
    /// among those accepted before this wake-up; with none, it is closed at
    /// the door. The loop serves ready scrapers before it accepts, so a
    /// scraper whose request came is read before it can lose its slot.
    func acceptWaiting(now: ContinuousClock.Instant) -> [Scraper] {
        guard let acceptor else { return [] }
        var accepted: [Scraper] = []
        let firstOfThisWakeUp = nextToken
        for _ in 0..<MetricsSettings.maxScrapers {
            switch acceptor.next(now: now) {
            case .drained:
                return accepted
            case .paused(let failure):
                if !pauseLogged {
                    logger.warning("cannot accept scrapers; pausing the metrics listener until a descriptor frees",
                                   metadata: ["error": "\(failure)"])
                    pauseLogged = true
                }
                return accepted
            case .refuse(let fd):
                refusedCount += 1
                Glibc.close(fd)
            case .connection(let fd):
                if scrapers.count >= MetricsSettings.maxScrapers {
                    guard let evicted = slotToTake(acceptedBefore: firstOfThisWakeUp) else {
                        refusedCount += 1
                        Glibc.close(fd)
                        continue
                    }
                    refusedCount += 1
                    close(evicted)
                }
                let scraper = Scraper(fd: fd, token: nextToken, deadline: now + Self.deadline)
                nextToken += 1
                scrapers[scraper.token] = scraper
                accepted.append(scraper)
            }
        }
        return accepted
    }

    /// The scraper a newcomer may replace: the one that has waited
    /// longest without a complete request, of those accepted before the
    /// token `first` (tokens count up with each connection accepted).
    private func slotToTake(acceptedBefore first: UInt64) -> Scraper? {
        scrapers.values.filter { !$0.wantsWrite && $0.token < first }.min { $0.token < $1.token }
    }

    /// Reads from or writes to `scraper`, once; `false` when it is done
    /// (answered in full, gone, or refused) and was closed.
    func serve(_ scraper: Scraper, readable: Bool, writable: Bool, exposition: () -> [UInt8]) -> Bool {
        if scraper.wantsWrite {
            return writable ? write(scraper) : true
        }
        guard readable else { return true }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(scraper.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count < 0, errno == EAGAIN || errno == EINTR { return true }
        guard count > 0 else { return finish(scraper) }
        scraper.request += buffer[0..<count]
        guard let end = MetricsRequest.headEnd(scraper.request, from: scraper.scanned) else {
            // The last bytes may be the start of the blank line.
            scraper.scanned = max(0, scraper.request.count - 3)
            guard scraper.request.count >= MetricsRequest.maxHead else { return true }
            scraper.response = MetricsRequest.headTooLong
            return write(scraper)
        }
        scraper.response = MetricsRequest.answer(toHead: scraper.request[..<end], hosts: hostNames, exposition: exposition)
        scraper.request = []
        return write(scraper)
    }

    /// Closes `scraper` unanswered.
    func close(_ scraper: Scraper) {
        _ = finish(scraper)
    }

    /// Closes the scrapers whose time is up.
    func expire(now: ContinuousClock.Instant) {
        for scraper in scrapers.values where now >= scraper.deadline { close(scraper) }
    }

    /// Closes every scraper and the listener.
    func close() {
        for scraper in scrapers.values { close(scraper) }
        if let fd { Glibc.close(fd) }
        acceptor = nil
    }

    private func write(_ scraper: Scraper) -> Bool {
        let written = scraper.response[scraper.written...].withUnsafeBytes {
            send(scraper.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        if written < 0 { return errno == EAGAIN || errno == EINTR ? true : finish(scraper) }
        scraper.written += written
        return scraper.written < scraper.response.count ? true : finish(scraper)
    }

    private func finish(_ scraper: Scraper) -> Bool {
        scrapers[scraper.token] = nil
        Glibc.close(scraper.fd)
        // A descriptor freed: a listener paused for want of one goes on.
        resume()
        return false
    }

    /// This machine's name, as `hostname` prints it.
    private static func machineName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "localhost" }
        return String(decoding: name.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
    }

    /// Where a passed socket listens, for the log.
    private static func localAddress(_ fd: Int32) -> String {
        guard let (address, port) = socketAddress(fd, getsockname),
            let ip = IPAddress(family: address.count == 4 ? .ipv4 : .ipv6, bytes: address)
        else { return "a socket from systemd" }
        return HostPort.authority(host: ip.description, port: Int(port), defaultPort: 0)
    }

    /// The address and port `call` (`getpeername`, `getsockname`) gives.
    private static func socketAddress(
        _ fd: Int32, _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> (address: [UInt8], port: UInt16)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) }
        }
        guard got == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: &storage) { raw in
            let port = UInt16(raw[2]) << 8 | UInt16(raw[3])
            switch family {
            case AF_INET:
                return (Array(raw[4..<8]), port)
            case AF_INET6:
                let bytes = Array(raw[8..<24])
                let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
                return (mapped ? Array(bytes[12...]) : bytes, port)
            default:
                return nil
            }
        }
    }
}
