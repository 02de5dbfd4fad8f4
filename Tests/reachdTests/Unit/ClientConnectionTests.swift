import Testing
@testable import Reachability
@testable import reachd

#if canImport(Glibc)
import Glibc
#endif

/// One daemon connection over a real socket pair: what it reads, queues and
/// writes, without a daemon or a namespace.
@Suite("A daemon's client connection")
struct ClientConnectionTests {
    /// Our end (served as a client) and the peer's end (the misbehaving user).
    final class Pair {
        let connection: ClientConnection
        let peer: Int32

        init(sendBuffer: Int32? = nil) throws {
            var ends: [Int32] = [0, 0]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
            if var size = sendBuffer {
                setsockopt(ends[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                setsockopt(ends[1], SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            connection = ClientConnection(fd: ends[0], user: 1000, now: .now)
            peer = ends[1]
        }

        deinit {
            close(connection.fd)
            close(peer)
        }

        func peerSends(_ text: String) throws {
            try UnixSocket.writeAll(peer, Array(text.utf8))
        }

        /// Everything the peer can read now.
        func peerReceives() -> [UInt8] {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count > 0 else { break }
                bytes += chunk[0..<count]
            }
            return bytes
        }
    }

    @Test func oneReadTakesOneChunkHoweverMuchIsWaiting() throws {
        let pair = try Pair()
        let request = #"{"op":"get"}"# + "\n"
        try pair.peerSends(String(repeating: request, count: 1000))
        #expect(pair.connection.read(now: .now))
        var queued = 0
        while pair.connection.nextRequest() != nil { queued += 1 }
        #expect(queued == ClientConnection.readChunkSize / request.utf8.count,
                "the rest stays in the peer's socket, not in the daemon")
    }

    @Test func aClientWithUnsentOutputIsNotRead() throws {
        let pair = try Pair(sendBuffer: 4096)
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: 100_000) + [10]
        #expect(pair.connection.send(line, now: .now))
        #expect(pair.connection.hasPendingOutput, "a small socket buffer cannot take 100 kB")
        #expect(pair.connection.interest == .writable, "backpressure: wait to write, do not read")
        _ = pair.peerReceives()
        #expect(pair.connection.flush(now: .now))
    }

    @Test func aBadRequestBehindPendingOutputStillGetsItsErrorLine() throws {
        let pair = try Pair(sendBuffer: 4096)
        let status = Array(("{\"type\":\"status\",\"pad\":\"" + String(repeating: "x", count: 50_000) + "\"}\n").utf8)
        #expect(pair.connection.send(status, now: .now))
        #expect(pair.connection.hasPendingOutput)
        let error = DaemonMessage.error(code: "bad_request", message: "no").line()
        #expect(pair.connection.close(with: error, now: .now))
        #expect(pair.connection.send(status, now: .now), "a later status does not displace the error")
        var bytes: [UInt8] = []
        while pair.connection.hasPendingOutput {
            bytes += pair.peerReceives()
            #expect(pair.connection.flush(now: .now))
        }
        bytes += pair.peerReceives()
        let received = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(received.count == 2, "the line in flight, then the error: \(received.map { $0.prefix(40) })")
        #expect(received.last?.contains("bad_request") == true)
        #expect(pair.connection.isFinished, "closed once the error is out")
    }

    /// Behind a line in flight, each stream keeps its newest line: a status
    /// replaces the status, a watch's answer that watch's, and an answer to
    /// a request replaces nothing. A status used to replace a watch's answer.
    @Test func eachStreamKeepsItsNewestLineBehindALineInFlight() throws {
        let pair = try Pair(sendBuffer: 4096)
        let big = Array(("{\"pad\":\"" + String(repeating: "x", count: 50_000) + "\"}\n").utf8)
        #expect(pair.connection.send(big, now: .now))
        #expect(pair.connection.hasPendingOutput)
        let sends: [(String, ClientConnection.OutputStream)] = [
            ("watch a 1", .watch("a")), ("status 1", .status), ("watch b 1", .watch("b")), ("answer 1", .answer),
            ("watch a 2", .watch("a")), ("status 2", .status), ("answer 2", .answer),
        ]
        for (text, stream) in sends { #expect(pair.connection.send(Array((text + "\n").utf8), stream: stream, now: .now)) }
        pair.connection.discardQueued(.watch("b"))
        var bytes: [UInt8] = []
        while pair.connection.hasPendingOutput {
            bytes += pair.peerReceives()
            #expect(pair.connection.flush(now: .now))
        }
        bytes += pair.peerReceives()
        let received = String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst()
        #expect(Array(received) == ["watch a 2", "status 2", "answer 1", "answer 2"])
    }

    @Test func aLastRequestWithoutANewlineCountsAtTheEnd() throws {
        let pair = try Pair()
        try pair.peerSends(#"{"op":"get"}"#)
        shutdown(pair.peer, Int32(SHUT_WR))
        #expect(pair.connection.read(now: .now))
        #expect(pair.connection.nextRequest() == nil, "not yet: the line may go on")
        #expect(pair.connection.read(now: .now))
        #expect(pair.connection.inputClosed)
        guard case .success(.get) = pair.connection.nextRequest() else {
            Issue.record("the unterminated last line was dropped")
            return
        }
    }

    @Test func movingBytesEitherWayCountsAsProgress() throws {
        let pair = try Pair()
        let start = pair.connection.lastProgress
        let later = start + .seconds(5)
        try pair.peerSends("{}")
        #expect(pair.connection.read(now: later))
        #expect(pair.connection.lastProgress == later)
        #expect(pair.connection.send(Array("x\n".utf8), now: later + .seconds(1)))
        #expect(pair.connection.lastProgress == later + .seconds(1))
    }
}
