import Testing
@testable import Reachability

/// The kernel's word of a TCP connection's end (the sock_diag destroy
/// groups), as recorded from a real kernel in Fixtures/closed-connections:
/// where it went, and whether anything came back.
@Suite("Decoding closed connections")
struct ClosedConnectionTests {
    static func connections(_ step: String) throws -> [ClosedConnection] {
        try NetlinkFixture("closed-connections").step(step).datagrams.flatMap { datagram in
            datagram.withUnsafeBytes { bytes in
                var found: [ClosedConnection] = []
                NetlinkFrame.forEach(in: bytes) { if let connection = ClosedConnection.decode($0) { found.append(connection) } }
                return found
            }
        }
    }

    @Test func anHTTPExchangeWasAnswered() throws {
        #expect(try Self.connections("answered: an HTTP exchange with 192.0.2.80")
            == [ClosedConnection(peer: IPAddress("192.0.2.80")!, source: IPAddress("10.77.0.2")!, outcome: .answered)])
        #expect(try Self.connections("answered: an HTTP exchange with [2001:db8::80]")
            == [ClosedConnection(peer: IPAddress("2001:db8::80")!, source: IPAddress("fd77::2")!, outcome: .answered)])
    }

    /// A refusal crossed the path: the peer answered.
    @Test func aRefusalIsAnAnswer() throws {
        #expect(try Self.connections("refused")
            == [ClosedConnection(peer: IPAddress("127.0.0.1")!, source: IPAddress("127.0.0.1")!, outcome: .answered)])
    }

    @Test func aConnectNobodyAnsweredFailed() throws {
        #expect(try Self.connections("unanswered")
            == [ClosedConnection(peer: IPAddress("192.0.2.80")!, source: IPAddress("10.77.0.2")!, outcome: .failed)])
    }

    /// The rule, where no fixture reaches: a connection that was answered
    /// and then ended retransmitting unacknowledged data failed; one that
    /// never sent (a listener) says nothing.
    @Test func theRule() {
        #expect(ClosedConnection.outcome(segmentsOut: 12, segmentsIn: 8, retransmits: 3, unacknowledged: 2) == .failed)
        #expect(ClosedConnection.outcome(segmentsOut: 12, segmentsIn: 8, retransmits: 0, unacknowledged: 2) == .answered)
        #expect(ClosedConnection.outcome(segmentsOut: 12, segmentsIn: 8, retransmits: 1, unacknowledged: 0) == .answered)
        #expect(ClosedConnection.outcome(segmentsOut: 1, segmentsIn: 0, retransmits: 0, unacknowledged: 0) == .failed)
        #expect(ClosedConnection.outcome(segmentsOut: 0, segmentsIn: 0, retransmits: 0, unacknowledged: 0) == nil)
    }

    /// An IPv6 socket's IPv4 peer (`::ffff:a.b.c.d`) is an IPv4 one, as its packets are.
    @Test func aMappedPeerIsIPv4() throws {
        var bytes = try #require(NetlinkFixture("closed-connections").step("answered: an HTTP exchange with [2001:db8::80]").datagrams.first)
        // inet_diag_msg after the 16-byte header: source at 8, destination at 24.
        let mapped: [UInt8] = Array(repeating: 0, count: 10) + [0xff, 0xff, 192, 0, 2, 80]
        bytes.replaceSubrange(16 + 24..<16 + 40, with: mapped)
        let decoded = bytes.withUnsafeBytes { buffer in
            var found: ClosedConnection?
            NetlinkFrame.forEach(in: buffer) { found = ClosedConnection.decode($0) }
            return found
        }
        #expect(decoded?.peer == IPAddress("192.0.2.80") && decoded?.family == .ipv4)
    }

    /// Every shorter copy of a real message decodes to nothing or to the
    /// same connection: no read runs past what the kernel sent.
    @Test func aTruncatedMessageIsNone() throws {
        let whole = try #require(NetlinkFixture("closed-connections").step("unanswered").datagrams.first)
        for length in 0..<whole.count {
            var bytes = Array(whole.prefix(length))
            if bytes.count >= 4 { bytes.replaceSubrange(0..<4, with: withUnsafeBytes(of: UInt32(length)) { Array($0) }) }
            let decoded = bytes.withUnsafeBytes { buffer in
                var found: ClosedConnection?
                NetlinkFrame.forEach(in: buffer) { found = ClosedConnection.decode($0) }
                return found
            }
            #expect(decoded == nil, "\(length) bytes of \(whole.count)")
        }
    }
}
