internal import CNetlink
#if canImport(Glibc)
import Glibc
#endif

/// The request side: dumps of links and addresses, and route lookups. A socket
/// of its own, so that replies never interleave with notifications.
final class NetlinkQuerySocket {
    private let socket: NetlinkSocket

    /// Its descriptor, for what asks of the socket rather than the kernel
    /// (the namespace's cookie).
    var fileDescriptor: Int32 { socket.fileDescriptor }

    /// - Parameters:
    ///   - receiveBufferBytes: the receive buffer to ask for (tests ask a
    ///     small one, to see overruns).
    ///   - replyBudget: the first batches' size in replies; by default
    ///     what the buffer the socket got holds.
    init(receiveBufferBytes: Int32 = receiveBufferBytes, replyBudget: Int? = nil) throws(NetlinkError) {
        socket = try NetlinkSocket(sequenceChecks: true)
        // The kernel always answers a request; the timeout only bounds a bug.
        _ = socket.setOption(SOL_SOCKET, SO_RCVTIMEO, timeval(tv_sec: 5, tv_usec: 0))
        // Room for a batch of replies: as root past net.core.rmem_max, else
        // as much of it as the system allows (208 KiB on a stock kernel).
        let got = try socket.setReceiveBuffer(receiveBufferBytes)
        self.replyBudget = replyBudget ?? Self.replyBudget(receiveBuffer: got)
        fullReplyBudget = self.replyBudget
    }

    /// What ``replyBudget`` started at, and grows back to once lookups go
    /// through without an overrun.
    private let fullReplyBudget: Int

    /// Asked for; the kernel doubles it for its bookkeeping, and caps it at
    /// net.core.rmem_max for a process without CAP_NET_ADMIN.
    static let receiveBufferBytes: Int32 = 1 << 20

    /// Replies in flight at once. The kernel charges each reply to the
    /// receive buffer by its truesize (the buffer it was built in, a page
    /// or more), not by its length: about 70 fit the default 208 KiB,
    /// whatever the route. A reply it cannot queue is dropped, request and
    /// all, and the read after says ENOBUFS. Sized from the buffer the
    /// socket got, halved on an overrun, never below ``minimumReplyBudget``.
    private(set) var replyBudget: Int

    /// Datagrams sent to the kernel: one per batch of route requests,
    /// whatever it holds.
    var datagramsSent: Int { socket.datagramsSent }

    /// Replies a batch may expect for a buffer of `receiveBuffer` bytes (as
    /// SO_RCVBUF reads back): half of it, at ``assumedReplyTruesize`` each,
    /// between ``minimumReplyBudget`` and ``maximumReplyBudget``.
    static func replyBudget(receiveBuffer: Int) -> Int {
        min(maximumReplyBudget, max(minimumReplyBudget, receiveBuffer / 2 / assumedReplyTruesize))
    }

    /// A route reply's truesize on a 4 KiB-page kernel, rounded up (a page of
    /// data and the skb around it).
    static let assumedReplyTruesize = 4096
    /// An IPv6 query's two replies, twice over: what the last halving leaves.
    static let minimumReplyBudget = 4
    /// 64 IPv6 queries: more in one batch saves no round trip worth having.
    static let maximumReplyBudget = 128
    /// Passes over what is still unanswered, each in batches the last
    /// overrun halved: enough to come down from the largest budget to the
    /// smallest and ask twice there.
    private static let maximumPasses = 7

    /// Links first, then addresses, as one list of events to replay into an
    /// empty table. Never routes: their number is unbounded.
    func dumpInterfaces() throws(NetlinkError) -> [NetlinkEvent] {
        try dump(Int32(RTM_GETLINK)) + dump(Int32(RTM_GETADDR))
    }

    /// Asks the kernel which route it would use for each of `destinations`.
    func lookupRoutes(to destinations: [IPAddress]) throws(NetlinkError) -> [RouteLookupResult?] {
        try lookupRoutes(destinations.map { RouteQuery($0) })
    }

    /// Asks the kernel which route it would use for each query: its answer,
    /// or `nil` where the answer was lost (the receive queue overran even
    /// with smaller batches): that one question is unknown, the rest stand.
    /// Requests go out in batches, each sent in full before its answers are
    /// read, so a batch costs one round trip; a batch holds one uid's
    /// queries, so that what one user asks never shares a batch, or its
    /// losses, with another's. Only a socket that fails (not an overrun) is
    /// thrown.
    func lookupRoutes(_ queries: [RouteQuery]) throws(NetlinkError) -> [RouteLookupResult?] {
        var answers = [RouteLookupResult?](repeating: nil, count: queries.count)
        var unanswered = Array(queries.indices)
        var passes = 0
        var overran = false
        while !unanswered.isEmpty, passes < Self.maximumPasses {
            passes += 1
            let before = unanswered.count
            var shrank = false
            for batch in Self.batches(unanswered, of: queries, replyBudget: replyBudget) {
                // The rtnetlink kernel side answers inside sendmsg: by the
                // time a batch is sent, every reply that fit is queued. An
                // overrun ends the pass, and the rest go in smaller batches,
                // down to the smallest.
                guard try lookUp(batch, of: queries, into: &answers) else { continue }
                overran = true
                if replyBudget > Self.minimumReplyBudget {
                    replyBudget = max(Self.minimumReplyBudget, replyBudget / 2)
                    shrank = true
                    break
                }
            }
            unanswered.removeAll { answers[$0] != nil }
            // A pass at the smallest batches that got nothing through would
            // get nothing the next time.
            guard unanswered.count < before || shrank else { break }
        }
        // Whatever overran it once (a burst of other work in the kernel's
        // buffer accounting) need not cost every later lookup a round trip.
        if !overran { replyBudget = min(fullReplyBudget, replyBudget * 2) }
        return answers
    }

    /// `positions` of `queries` cut into batches of one uid each, in the
    /// order first asked, none expecting more than `replyBudget` replies (an
    /// IPv6 query brings two, see ``lookUp(_:of:into:)``).
    static func batches(_ positions: [Int], of queries: [RouteQuery], replyBudget: Int) -> [[Int]] {
        var batches: [[Int]] = []
        for group in byUser(positions, of: queries) where !group.isEmpty {
            // A group within the budget is one batch as it came (the host's
            // own lookups at a route change): cut, it made two arrays more.
            if group.reduce(0, { $0 + replyCount(of: queries[$1]) }) <= replyBudget {
                batches.append(group)
                continue
            }
            var batch: [Int] = []
            var replies = 0
            for position in group {
                let expected = replyCount(of: queries[position])
                if !batch.isEmpty && replies + expected > replyBudget {
                    batches.append(batch)
                    batch = []
                    replies = 0
                }
                batch.append(position)
                replies += expected
            }
            if !batch.isEmpty { batches.append(batch) }
        }
        return batches
    }

    /// `positions` grouped by uid, in the order each uid first comes. The
    /// host's own lookups, on every route change, are all one user's: no
    /// grouping to do then.
    private static func byUser(_ positions: [Int], of queries: [RouteQuery]) -> [[Int]] {
        let first = positions.first.map { queries[$0].uid }
        if positions.allSatisfy({ queries[$0].uid == first }) { return [positions] }
        var groups: [UInt32?: [Int]] = [:]
        var order: [UInt32?] = []
        for position in positions {
            let uid = queries[position].uid
            if groups[uid] == nil { order.append(uid) }
            groups[uid, default: []].append(position)
        }
        return order.map { groups[$0]! }
    }

    private static func replyCount(of query: RouteQuery) -> Int {
        query.destination.family == .ipv6 ? 2 : 1
    }

    /// Each IPv6 query is asked twice in the same round trip: the lookup,
    /// whose answer (a copy of the route for this packet) carries the source
    /// address the kernel would use but no expiry, and a FIB match, whose
    /// answer is the route as the table holds it, lifetime included (as `ip
    /// route get ... fibmatch` shows it). Only IPv6 routes expire.
    /// Fills in the answers of `batch` that came whole (an IPv6 one needs
    /// both), and returns whether the receive queue overran.
    private func lookUp(
        _ batch: [Int], of queries: [RouteQuery], into answers: inout [RouteLookupResult?]
    ) throws(NetlinkError) -> Bool {
        let count = batch.count
        // Slots 0..<count are the lookups, count + slot their FIB matches.
        var datagram = RouteRequestDatagram(requests: 2 * count)
        var requests = SentRequests(capacity: 2 * count)
        let port = socket.localPort
        for (slot, position) in zip(0..., batch) {
            let query = queries[position]
            let sequence = socket.nextSequence()
            datagram.append(query, matchingRoute: false, sequence: sequence, port: port)
            requests.add(sequence, slot: slot)
            if query.destination.family == .ipv6 {
                let sequence = socket.nextSequence()
                datagram.append(query, matchingRoute: true, sequence: sequence, port: port)
                requests.add(sequence, slot: count + slot)
            }
        }
        try socket.send(datagram.bytes, operation: "send route lookups")
        var replies = [RouteLookupResult?](repeating: nil, count: 2 * count)
        var missing = requests.count
        var overran = false
        while missing > 0 {
            // After an overrun the rest of what was queued is read without
            // waiting: what is not there was dropped.
            switch try socket.receive(waiting: !overran) {
            case .datagram(let bytes):
                missing -= Self.takeAnswers(in: bytes, requests: &requests, into: &replies)
            case .overrun:
                overran = true
            case .wouldBlock:
                guard overran else { throw NetlinkError("receive a route lookup answer", errno: ETIMEDOUT) }
                missing = 0
            }
        }
        for (slot, position) in zip(0..., batch) {
            guard let lookup = replies[slot] else { continue }
            if queries[position].destination.family == .ipv6 {
                guard let match = replies[count + slot] else { continue }
                answers[position] = match.lifetime.map(lookup.expiring(after:)) ?? lookup
            } else {
                answers[position] = lookup
            }
        }
        return overran
    }

    /// Files each frame of one datagram under the position its sequence
    /// number was sent for; returns how many positions it answered. A frame
    /// of ours that is no route (or that libnl can't parse) answers too, as
    /// EPROTO: it must not leave a hole.
    static func takeAnswers(
        in bytes: UnsafeRawBufferPointer, requests: inout SentRequests, into answers: inout [RouteLookupResult?]
    ) -> Int {
        var answered = 0
        NetlinkFrame.forEach(in: bytes) { frame in
            guard let position = requests.slot(answering: frame.sequence), answers[position] == nil else { return }
            answers[position] = NetlinkDecoder.routeLookupResult(for: frame) ?? .failed(.malformedAnswer)
            answered += 1
        }
        return answered
    }

    private func dump(_ type: Int32) throws(NetlinkError) -> [NetlinkEvent] {
        let operation = type == RTM_GETLINK ? "dump links" : "dump addresses"
        // A dump the kernel marks interrupted (NLM_F_DUMP_INTR) mixed two states:
        // take it again. Five in a row means the table is churning; say so.
        for _ in 0..<5 {
            guard let message = nlmsg_alloc_simple(type, Int32(cnl_nlm_f_dump())) else {
                throw NetlinkError(operation, libnlCode: -NLE_NOMEM)
            }
            defer { nlmsg_free(message) }
            var request = rtgenmsg(rtgen_family: UInt8(AF_UNSPEC))
            try libnl(operation, nlmsg_append(message, &request, MemoryLayout<rtgenmsg>.size, Int32(NLMSG_ALIGNTO)))
            let sequence = try socket.send(message, operation: operation)
            if let events = try collectDump(sequence: sequence, operation: operation) { return events }
        }
        throw NetlinkError(operation, libnlCode: -NLE_DUMP_INTR)
    }

    /// The dump's events, or `nil` when it was interrupted or overran.
    private func collectDump(sequence: UInt32, operation: String) throws(NetlinkError) -> [NetlinkEvent]? {
        var events: [NetlinkEvent] = []
        var interrupted = false
        while true {
            let received = try receiveBlocking(operation)
            // A truncated datagram may have held NLMSG_DONE: start over rather than
            // wait for it. Replies to this attempt that are still queued carry its
            // sequence number and are skipped by the next one.
            guard case .datagram(let bytes) = received else { return nil }
            var finished = false
            var failure: Int32 = 0
            NetlinkFrame.forEach(in: bytes) { frame in
                guard frame.sequence == sequence, !finished else { return }
                if frame.isDumpInterrupted { interrupted = true }
                switch frame.type {
                case NetlinkFrame.done: finished = true
                case NetlinkFrame.error: failure = frame.errorNumber; finished = true
                default: events.append(NetlinkDecoder.event(for: frame))
                }
            }
            if failure != 0 { throw NetlinkError(operation, errno: failure) }
            if finished { return interrupted ? nil : events }
        }
    }

    private func receiveBlocking(_ operation: String) throws(NetlinkError) -> NetlinkSocket.Received {
        let received = try socket.receive()
        if case .wouldBlock = received {
            throw NetlinkError(operation, errno: ETIMEDOUT)
        }
        return received
    }
}
