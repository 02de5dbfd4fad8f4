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

    init() throws(NetlinkError) {
        socket = try NetlinkSocket(sequenceChecks: true)
        // The kernel always answers a request; the timeout only bounds a bug.
        _ = socket.setOption(SOL_SOCKET, SO_RCVTIMEO, timeval(tv_sec: 5, tv_usec: 0))
    }

    /// Links first, then addresses, as one list of events to replay into an
    /// empty table. Never routes: their number is unbounded.
    func dumpInterfaces() throws(NetlinkError) -> [NetlinkEvent] {
        try dump(Int32(RTM_GETLINK)) + dump(Int32(RTM_GETADDR))
    }

    /// Asks the kernel which route it would use for each of `destinations`.
    func lookupRoutes(to destinations: [IPAddress]) throws(NetlinkError) -> [RouteLookupResult] {
        try lookupRoutes(destinations.map { RouteQuery($0) })
    }

    /// Asks the kernel which route it would use for each query. Requests go
    /// out in chunks, each sent in full before its answers are read, so a
    /// chunk costs one round trip and its answers always fit the receive
    /// buffer (an answer the kernel cannot queue is lost, request and all).
    func lookupRoutes(_ queries: [RouteQuery]) throws(NetlinkError) -> [RouteLookupResult] {
        var answers: [RouteLookupResult] = []
        answers.reserveCapacity(queries.count)
        var start = 0
        while start < queries.count {
            let end = min(start + Self.lookupChunk, queries.count)
            answers += try lookUpChunk(queries[start..<end])
            start = end
        }
        return answers
    }

    /// Lookups in flight at once: 64 answers are about 8 KiB.
    private static let lookupChunk = 64

    /// Each IPv6 query is asked twice in the same round trip: the lookup,
    /// whose answer (a copy of the route for this packet) carries the source
    /// address the kernel would use but no expiry, and a FIB match, whose
    /// answer is the route as the table holds it, lifetime included (as `ip
    /// route get ... fibmatch` shows it). Only IPv6 routes expire.
    private func lookUpChunk(_ queries: ArraySlice<RouteQuery>) throws(NetlinkError) -> [RouteLookupResult] {
        let count = queries.count
        // Positions 0..<count are the lookups, count + position their FIB matches.
        var sequences: [UInt32: Int] = [:]
        for (position, query) in zip(0..., queries) {
            sequences[try send(query, matchingRoute: false)] = position
            if query.destination.family == .ipv6 { sequences[try send(query, matchingRoute: true)] = count + position }
        }
        var answers = [RouteLookupResult?](repeating: nil, count: 2 * count)
        var missing = sequences.count
        while missing > 0 {
            guard case .datagram(let bytes) = try receiveBlocking("receive a route lookup answer")
            else { throw NetlinkError("receive a route lookup answer", errno: ENOBUFS) }
            missing -= Self.takeAnswers(in: bytes, sequences: sequences, into: &answers)
        }
        return (0..<count).map { position in
            let lookup = answers[position]!
            guard let match = answers[count + position], let lifetime = match.lifetime else { return lookup }
            return lookup.expiring(after: lifetime)
        }
    }

    /// Sends one RTM_GETROUTE for `query`; with `matchingRoute`, for the
    /// route the table holds (RTM_F_FIB_MATCH). Returns its sequence number.
    private func send(_ query: RouteQuery, matchingRoute: Bool) throws(NetlinkError) -> UInt32 {
        let destination = query.destination
        guard let message = nlmsg_alloc_simple(Int32(RTM_GETROUTE), 0) else {
            throw NetlinkError("allocate a route request", libnlCode: -NLE_NOMEM)
        }
        defer { nlmsg_free(message) }
        var header = rtmsg()
        header.rtm_family = UInt8(destination.family == .ipv4 ? AF_INET : AF_INET6)
        header.rtm_dst_len = UInt8(destination.bytes.count * 8)
        // Without it the kernel answers an IPv4 lookup with table `main`
        // whichever table the route came from (as `ip route get` knows).
        header.rtm_flags = UInt32(RTM_F_LOOKUP_TABLE) | (matchingRoute ? UInt32(RTM_F_FIB_MATCH) : 0)
        try libnl("build a route request",
                  nlmsg_append(message, &header, MemoryLayout<rtmsg>.size, Int32(NLMSG_ALIGNTO)))
        try libnl("build a route request", destination.bytes.withUnsafeBytes {
            nla_put(message, Int32(RTA_DST.rawValue), Int32($0.count), $0.baseAddress)
        })
        if let uid = query.uid {
            try libnl("build a route request", nla_put_u32(message, Int32(RTA_UID.rawValue), uid))
        }
        if let port = query.tcpPort {
            try libnl("build a route request", nla_put_u8(message, Int32(RTA_IP_PROTO.rawValue), UInt8(IPPROTO_TCP)))
            // Network byte order, as the kernel reads RTA_DPORT.
            try libnl("build a route request", nla_put_u16(message, Int32(RTA_DPORT.rawValue), port.bigEndian))
        }
        return try socket.send(message, operation: "send a route lookup")
    }

    /// Files each frame of one datagram under the position its sequence
    /// number was sent for; returns how many positions it answered. A frame
    /// of ours that is no route (or that libnl can't parse) answers too, as
    /// EPROTO: it must not leave a hole.
    static func takeAnswers(
        in bytes: UnsafeRawBufferPointer, sequences: [UInt32: Int], into answers: inout [RouteLookupResult?]
    ) -> Int {
        var answered = 0
        NetlinkFrame.forEach(in: bytes) { frame in
            guard let position = sequences[frame.sequence], answers[position] == nil else { return }
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
