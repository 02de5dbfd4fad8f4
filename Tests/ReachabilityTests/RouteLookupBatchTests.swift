import Testing
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// Route lookups in batches the receive buffer holds (issue 42): the kernel
/// charges each reply by its truesize and drops one it cannot queue, so a
/// batch is sized by the replies it brings, one user's to a batch, and a
/// lost answer is that question's alone.
@Suite("Route lookup batches")
struct RouteLookupBatchTests {
    static func query(_ address: String, uid: UInt32? = nil) -> RouteQuery {
        RouteQuery(IPAddress(address)!, uid: uid)
    }

    @Test func aBatchExpectsNoMoreRepliesThanTheBudgetAndAnIPv6QueryBringsTwo() {
        let queries = [Self.query("192.0.2.1"), Self.query("2001:db8::1"), Self.query("2001:db8::2"), Self.query("192.0.2.2")]
        #expect(NetlinkQuerySocket.batches(Array(queries.indices), of: queries, replyBudget: 4) == [[0, 1], [2, 3]])
        #expect(NetlinkQuerySocket.batches(Array(queries.indices), of: queries, replyBudget: 128) == [[0, 1, 2, 3]])
        // One query above the budget still goes, alone.
        #expect(NetlinkQuerySocket.batches([1, 2], of: queries, replyBudget: 1) == [[1], [2]])
    }

    @Test func eachBatchHoldsOneUsersQueriesInTheOrderFirstAsked() {
        let queries = [
            Self.query("192.0.2.1", uid: 1000), Self.query("192.0.2.2"), Self.query("192.0.2.3", uid: 1000),
            Self.query("192.0.2.4", uid: 65534), Self.query("192.0.2.5"),
        ]
        #expect(NetlinkQuerySocket.batches(Array(queries.indices), of: queries, replyBudget: 128) == [[0, 2], [1, 4], [3]])
    }

    @Test func theBudgetIsHalfTheBufferAtAPageAReply() {
        #expect(NetlinkQuerySocket.replyBudget(receiveBuffer: 212_992 * 2) == 52, "SO_RCVBUF 208 KiB, as a user gets it")
        #expect(NetlinkQuerySocket.replyBudget(receiveBuffer: 4 << 20) == NetlinkQuerySocket.maximumReplyBudget)
        #expect(NetlinkQuerySocket.replyBudget(receiveBuffer: 0) == NetlinkQuerySocket.minimumReplyBudget)
    }

    /// A batch goes to the kernel in one datagram, which it answers request
    /// by request: one system call, where each request was one of its own.
    /// The answers differ (this host's addresses, another's, and IPv6's two
    /// requests a lookup), so one filed under another's request shows.
    @Test func aBatchIsSentInOneDatagramAndEachRequestAnswered() throws {
        let socket = try NetlinkQuerySocket(replyBudget: NetlinkQuerySocket.maximumReplyBudget)
        let ipv6 = access("/proc/sys/net/ipv6", F_OK) == 0
        var queries = [Self.query("127.0.0.1"), Self.query("192.0.2.1"), Self.query("127.0.0.2")]
        if ipv6 { queries += [Self.query("::1"), Self.query("2001:db8::1")] }
        queries.append(Self.query("127.0.0.3", uid: 65534))
        let before = socket.datagramsSent
        let answers = try socket.lookupRoutes(queries)
        #expect(socket.datagramsSent - before == 2, "two users' batches, a datagram each")
        for (query, answer) in zip(queries, answers) {
            let local = if case .route(.local, _, _, _, _, _) = answer { true } else { false }
            #expect(local == query.destination.isLoopback, "\(query.destination): \(String(describing: answer))")
            // An answer filed under another family's request names that family's source.
            if case .route(_, _, _, _, let source?, _) = answer {
                #expect(source.family == query.destination.family, "\(query.destination): from \(source)")
            }
        }
    }

    /// A socket whose first batches are far too big for its buffer (128
    /// replies against room for about ten): every query is still answered,
    /// nothing is thrown, and the batches shrank. Before, the first overrun
    /// was thrown out of the lookup, and with it every answer.
    @Test func anOverrunShrinksTheBatchesAndLosesNoAnswer() throws {
        let socket = try NetlinkQuerySocket(receiveBufferBytes: 16 * 1024, replyBudget: NetlinkQuerySocket.maximumReplyBudget)
        let queries = (1...256).map { Self.query("2001:db8::\(String($0, radix: 16))") } + [Self.query("192.0.2.1")]
        let answers = try socket.lookupRoutes(queries)
        #expect(answers.count == queries.count)
        #expect(answers.allSatisfy { $0 != nil }, "\(answers.filter { $0 == nil }.count) answers lost")
        #expect(socket.replyBudget < NetlinkQuerySocket.maximumReplyBudget, "the batches shrank at the overrun")
        // Lookups that fit grow them back, a doubling at a time.
        let shrunk = socket.replyBudget
        _ = try socket.lookupRoutes([Self.query("192.0.2.1")])
        #expect(socket.replyBudget == min(2 * shrunk, NetlinkQuerySocket.maximumReplyBudget))
    }

    /// Where even a batch of four replies cannot be queued whole, what came
    /// is kept and the rest are unknown (`nil`), never an error.
    @Test func whatCannotBeAnsweredIsUnknownNotAFailure() throws {
        let socket = try NetlinkQuerySocket(receiveBufferBytes: 1, replyBudget: NetlinkQuerySocket.maximumReplyBudget)
        let queries = (1...64).map { Self.query("2001:db8::\(String($0, radix: 16))") }
        let answers = try socket.lookupRoutes(queries)
        let answered = answers.compactMap { $0 }.count
        #expect(answered > 0, "the first replies of each batch fit")
        #expect(answered < queries.count, "a buffer this small loses some")
        #expect(socket.replyBudget == NetlinkQuerySocket.minimumReplyBudget)
    }
}
