import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// One client of the daemon, which costs it a bounded amount of memory and
/// work whatever the client does.
///
/// - Output holds at most the line being written and, behind it, the newest
///   line of each stream: the status, and each of its watches (at most
///   ``DestinationLimits/perConnection``). A subscriber that stops reading
///   costs a bounded number of lines (the status shared with every other
///   client) and is sent the newest state of each when it drains.
/// - Input is read one small chunk per wake-up, and only while no output is
///   pending: a client that does not read its answers is not read either, so
///   its requests wait in its own socket buffer, not in the daemon.
/// - Requests read are parsed into a short queue that the server works through
///   a few per wake-up (``ClientLimits/requestsPerWakeup``).
final class ClientConnection {
    /// The protocol's limit on a request line.
    static let requestLineLimit = 4096
    /// Bytes read per wake-up: a few dozen requests at most.
    static let readChunkSize = 1024

    let fd: Int32
    /// Who connected (`SO_PEERCRED`), for the per-user limit.
    let user: UInt32
    /// It connected from the daemon's network namespace, or where that
    /// cannot be told (a kernel before 5.14): only then are its `reach` and
    /// `watch` answered.
    let ofThisNetwork: Bool
    /// Its name in the event poll, never reused: a descriptor number is.
    let token: UInt64
    /// Its place in the ``ClientTable``'s list of subscribers of ``detail``;
    /// `nil` until it subscribes.
    var subscriberSlot: Int?
    /// What the subscription asked for: a summary subscriber is written to
    /// only when the summary changes. Set by the ``ClientTable``.
    var detail = StatusDetail.full
    /// What the event poll was last told to wait for.
    var registeredInterest: Interest = .readable
    var isSubscribed: Bool { subscriberSlot != nil }
    /// The client shut down its sending side (`echo ... | socat` does). A
    /// subscriber may still be reading; only a full hang-up ends it.
    private(set) var inputClosed = false
    /// An error line is queued: nothing more is read or served, and the
    /// connection closes once the line is out.
    private(set) var isClosing = false
    /// Waits for the connectivity check it asked for: not idle meanwhile,
    /// and neither read nor served until it is answered, so that at most
    /// one of its requests waits in the daemon; those it sent after wait in
    /// its own socket buffer (a client pipelining checks costs one waiter).
    var awaitsCheck = false
    /// Its watches and unanswered `reach` requests, counted by
    /// ``DestinationWatches``: a client with either is not idle, nor finished.
    var destinationRequests = 0
    /// When bytes last moved either way, for the idle limit.
    private(set) var lastProgress: ContinuousClock.Instant
    private var input = LineBuffer(limit: requestLineLimit)
    private var requests: [Result<ClientRequest, RequestError>] = []
    /// The line being written and how much of it went out.
    private var writing: [UInt8] = []
    private var written = 0
    /// Lines queued behind `writing`, oldest first; a newer line of the same
    /// stream replaces the one queued. A status line says what it is.
    private var queued: [(stream: OutputStream, line: [UInt8], status: StatusLine?)] = []

    /// What the status line queued behind the one being written is, while
    /// one is: the next status sent replaces it, and must tell what it told
    /// (``PublishedLines/line(_:replacing:)``).
    var queuedStatus: StatusLine? { queued.first { $0.stream == .status }?.status }

    /// What a status line says of the statuses before it.
    enum StatusLine {
        /// The reader's first: no changes.
        case first
        /// News: what changed since the status before it.
        case news([StatusChange])
    }

    /// What a line is the newest state of. A newer status replaces the
    /// status queued, a watch's newer answer its answer; an answer to a
    /// request replaces nothing.
    enum OutputStream: Equatable {
        case status
        case watch(String)
        case answer
    }

    init(fd: Int32, user: UInt32, ofThisNetwork: Bool = true, token: UInt64 = 0, now: ContinuousClock.Instant) {
        self.fd = fd
        self.user = user
        self.ofThisNetwork = ofThisNetwork
        self.token = token
        lastProgress = now
    }

    /// Whether the connection waits for the socket to become writable.
    var hasPendingOutput: Bool { written < writing.count }

    /// When the idle limit closes it, if nothing moves before; `nil` for a
    /// subscriber, or a client waiting for a connectivity check it asked for.
    func idleDeadline(after limit: Duration) -> ContinuousClock.Instant? {
        isSubscribed || awaitsCheck || destinationRequests > 0 ? nil : lastProgress + limit
    }

    /// Requests are queued and can be answered now.
    var isReady: Bool { !requests.isEmpty && !hasPendingOutput && !isClosing && !awaitsCheck }

    /// Nothing more will be asked and nothing is left to send.
    var isFinished: Bool {
        !hasPendingOutput && (isClosing || (inputClosed && requests.isEmpty && !isSubscribed && !awaitsCheck && destinationRequests == 0))
    }

    /// What to wait for: writability while output is pending (and nothing
    /// else: backpressure), input only when every request read is answered
    /// and no check is awaited.
    var interest: Interest {
        if hasPendingOutput { return .writable }
        return inputClosed || isClosing || !requests.isEmpty || awaitsCheck ? [] : .readable
    }

    /// Reads one chunk without blocking and queues the requests it completes.
    /// At the end of the stream a last line without a newline counts too.
    /// Returns `false` when the socket failed.
    func read(now: ContinuousClock.Instant) -> Bool {
        var chunk = [UInt8](repeating: 0, count: Self.readChunkSize)
        var count: Int
        repeat {
            count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        } while count < 0 && errno == EINTR
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK }
        lastProgress = now
        if count == 0 {
            inputClosed = true
            if let last = input.finish() { requests.append(ClientRequest.parse(last)) }
            return true
        }
        do {
            for line in try input.append(chunk[0..<count]) { requests.append(ClientRequest.parse(line)) }
        } catch {
            requests.append(.failure(RequestError(
                "request line longer than \(Self.requestLineLimit) bytes; send one short JSON object per line")))
        }
        return true
    }

    /// The oldest request not yet answered.
    func nextRequest() -> Result<ClientRequest, RequestError>? {
        requests.isEmpty ? nil : requests.removeFirst()
    }

    /// Queues a line; `status` says what a line of the `.status` stream is.
    /// Returns `false` when the connection is broken.
    func send(
        _ line: [UInt8], stream: OutputStream = .status, status: StatusLine = .first, now: ContinuousClock.Instant
    ) -> Bool {
        guard !isClosing else { return true }
        if hasPendingOutput {
            let entry = (stream, line, stream == .status ? status : nil)
            if stream != .answer, let position = queued.firstIndex(where: { $0.stream == stream }) {
                queued[position] = entry
            } else {
                queued.append(entry)
            }
            return true
        }
        writing = line
        written = 0
        return flush(now: now)
    }

    /// Queues `line` as the last thing this connection sends, behind anything
    /// in flight, and stops reading and serving. Returns `false` when broken.
    func close(with line: [UInt8], now: ContinuousClock.Instant) -> Bool {
        requests.removeAll()
        let sent = send(line, stream: .answer, now: now)
        isClosing = true
        return sent
    }

    /// Forgets a watch's queued answer: it was unwatched.
    func discardQueued(_ stream: OutputStream) {
        queued.removeAll { $0.stream == stream }
    }

    /// Writes as much as the socket takes. Returns `false` when the peer is gone.
    func flush(now: ContinuousClock.Instant) -> Bool {
        while true {
            while written < writing.count {
                let count = writing[written...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                if count < 0 {
                    switch errno {
                    case EINTR: continue
                    case EAGAIN, EWOULDBLOCK: return true
                    default: return false
                    }
                }
                written += count
                lastProgress = now
            }
            guard !queued.isEmpty else { return true }
            writing = queued.removeFirst().line
            written = 0
        }
    }
}
