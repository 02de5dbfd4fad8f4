import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP listener for Prometheus: `GET /metrics` (and `HEAD`), one
/// request per connection, answered and closed. Run by the daemon's loop,
/// which waits on ``fd`` and each scraper's descriptor.
///
/// A scraper is a client like any other, and may be hostile: a request head
/// is at most ``maxRequest`` bytes, all of it within ``deadline`` of the
/// connection (a slow-loris gets no more time by trickling), each wake-up
/// reads at most one buffer from each, and at most ``maxScrapers`` are held
/// at once (more are closed at the door). Written by hand rather than with
/// an HTTP server package: one verb on one path, inside an epoll loop that
/// already exists, where SwiftNIO would bring a second event loop and
/// threads to a daemon that sleeps in one `epoll_wait`.
final class MetricsListener {
    static let maxRequest = 8192
    static let maxScrapers = 16
    static let deadline: Duration = .seconds(5)
    /// Tokens at and above this one are scrapers'.
    static let firstToken: UInt64 = 1 << 62

    /// One scraper's connection.
    final class Scraper {
        let fd: Int32
        let token: UInt64
        let deadline: ContinuousClock.Instant
        fileprivate var request: [UInt8] = []
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

    let fd: Int32
    private(set) var scrapers: [UInt64: Scraper] = [:]
    private var nextToken = firstToken

    init(address: MetricsSettings.Address) throws(SystemError) {
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
        self.fd = fd
    }

    /// Binds `fd` to a `sockaddr_in` or `sockaddr_in6`.
    private static func bind<Address>(_ fd: Int32, _ address: inout Address) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    /// When the first scraper's time is up; `nil` with none connected.
    var nextDeadline: ContinuousClock.Instant? { scrapers.values.map(\.deadline).min() }

    /// Takes the connections waiting (a bounded number per wake-up): the
    /// scrapers to wait on for reading.
    func acceptWaiting(now: ContinuousClock.Instant) -> [Scraper] {
        var accepted: [Scraper] = []
        for _ in 0..<Self.maxScrapers {
            let client = UnixSocket.accept(from: fd)
            guard client >= 0 else { break }
            // More than maxScrapers at once are closed at the door.
            guard scrapers.count < Self.maxScrapers else {
                Glibc.close(client)
                continue
            }
            let scraper = Scraper(fd: client, token: nextToken, deadline: now + Self.deadline)
            nextToken += 1
            scrapers[scraper.token] = scraper
            accepted.append(scraper)
        }
        return accepted
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
        guard let answer = Self.answer(to: scraper.request, exposition: exposition) else { return true }
        scraper.response = answer
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
        Glibc.close(fd)
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
        return false
    }

    /// The response to a request head, once it is complete or can't be;
    /// `nil` while more may come.
    static func answer(to request: [UInt8], exposition: () -> [UInt8]) -> [UInt8]? {
        guard let end = headEnd(request) else {
            return request.count >= maxRequest ? response(431, "the request head is over \(maxRequest) bytes\n") : nil
        }
        let requestHead = request[..<end]
        let lineEnd = requestHead.firstIndex(of: UInt8(ascii: "\r")) ?? requestHead.endIndex
        let parts = requestHead[..<lineEnd].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].starts(with: Array("HTTP/1.".utf8)) else {
            return response(400, "a request line is METHOD PATH HTTP/1.x\n")
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        let target = parts[1].split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard method == "GET" || method == "HEAD" else { return response(405, "only GET and HEAD\n", allow: true) }
        guard target.elementsEqual("/metrics".utf8) else { return response(404, "reachd's metrics are at /metrics\n") }
        let body = exposition()
        var answer = head(200, contentType: "text/plain; version=0.0.4; charset=utf-8", length: body.count, allow: false)
        if method == "GET" { answer += body }
        return answer
    }

    /// Where the head ends: after its blank line (CRLF CRLF, or LF LF).
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") {
                if bytes[index + 1] == UInt8(ascii: "\n") { return index + 2 }
                if bytes[index + 1] == UInt8(ascii: "\r"), index + 2 < bytes.count, bytes[index + 2] == UInt8(ascii: "\n") {
                    return index + 3
                }
            }
            index += 1
        }
        return nil
    }

    private static func response(_ status: Int, _ text: String, allow: Bool = false) -> [UInt8] {
        head(status, contentType: "text/plain; charset=utf-8", length: text.utf8.count, allow: allow) + Array(text.utf8)
    }

    private static func head(_ status: Int, contentType: String, length: Int, allow: Bool) -> [UInt8] {
        let reason = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
                      431: "Request Header Fields Too Large"][status] ?? "Error"
        var text = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: \(contentType)\r\nContent-Length: \(length)\r\nConnection: close\r\n"
        if allow { text += "Allow: GET, HEAD\r\n" }
        return Array((text + "\r\n").utf8)
    }
}
