#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
@testable import Reachability

/// Netlink bytes the kernel never sends, and senders that are not the kernel.
@Suite("Netlink input that is not the kernel's")
struct HostileNetlinkTests {
    /// libFuzzer's reproducer: an NLMSG_ERROR whose error is INT32_MIN, whose
    /// negation trapped.
    static let errorOfInt32Min: [UInt8] = hex("14000000020000000000000000000000 00000080")

    @Test func anErrorCodeTheKernelNeverSendsIsAProtocolErrorNotATrap() {
        let result = Self.errorOfInt32Min.withUnsafeBytes { bytes -> RouteLookupResult? in
            var found: RouteLookupResult?
            NetlinkFrame.forEach(in: bytes) { found = NetlinkDecoder.routeLookupResult(for: $0) }
            return found
        }
        #expect(result == .failed(.malformedAnswer))
    }

    /// libFuzzer's finds in libnl 3.7's route parser, read from the fuzz
    /// seed corpus that keeps them: an RTM_NEWROUTE whose RTA_VIA is shorter
    /// than its family field (libnl called memcpy with a size of -1, a crash
    /// outside a sanitizer), and, as the second message of its datagram, a
    /// last multipath next hop whose padding overruns the attribute (libnl
    /// allocated next hops until memory ran out).
    @Test(arguments: [("libnl-rta-via-negative-memcpy", 0), ("libnl-multipath-padding-oom", 1)])
    func aRouteAnswerThatLibnlWouldMisreadIsAProtocolError(seed: String, message: Int) throws {
        let path = packageRoot.appendingPathComponent("Fuzz/Corpus/NetlinkDecoder/\(seed)")
        let results = Self.routeLookupResults(in: [UInt8](try Data(contentsOf: path)))
        #expect(results.count > message && results[message] == .failed(.malformedAnswer), "\(results)")
    }

    /// A frame of a lookup's sequence that is no route (an NLMSG_DONE here)
    /// answers that lookup with EPROTO: a hole in the answers trapped.
    @Test func aFrameOfOurSequenceThatIsNoRouteAnswersAsAProtocolError() {
        let done: [UInt8] = hex("14000000030000000700000000000000 00000000")  // NLMSG_DONE, sequence 7
        var answers: [RouteLookupResult?] = [nil, nil]
        var requests = SentRequests(capacity: 1)
        requests.add(7, slot: 1)
        let answered = done.withUnsafeBytes {
            NetlinkQuerySocket.takeAnswers(in: $0, requests: &requests, into: &answers)
        }
        #expect(answered == 1 && answers[1] == .failed(.malformedAnswer) && answers[0] == nil)
    }

    /// A batch's answers are matched to its requests by sequence: in order,
    /// out of order, with one lost or one that is not the batch's, each
    /// fills the slot of the request it answers, once. Each answer here is
    /// a refusal whose errno is its sequence, so a slot shows whose it is.
    @Test func eachAnswerFillsTheSlotOfTheRequestItAnswers() {
        // NLMSG_ERROR: the header, the negative errno, the request's header.
        func refusal(_ sequence: UInt32) -> [UInt8] {
            let bytes = { (value: UInt32) in withUnsafeBytes(of: value.littleEndian, Array.init) }
            return bytes(36) + [2, 0, 0, 0] + bytes(sequence) + bytes(0) + bytes(UInt32(bitPattern: -Int32(sequence)))
                + [UInt8](repeating: 0, count: 16)
        }
        let slots: [UInt32: Int] = [10: 2, 11: 0, 12: 1]
        for order: [UInt32] in [[10, 11, 12], [12, 99, 10, 11], [11, 12], [12, 12, 11, 10, 10], [11]] {
            var requests = SentRequests(capacity: 3)
            for sequence in [10, 11, 12] as [UInt32] { requests.add(sequence, slot: slots[sequence]!) }
            var answers = [RouteLookupResult?](repeating: nil, count: 3)
            let answered = order.flatMap(refusal).withUnsafeBytes {
                NetlinkQuerySocket.takeAnswers(in: $0, requests: &requests, into: &answers)
            }
            var expected = [RouteLookupResult?](repeating: nil, count: 3)
            for sequence in order where slots[sequence] != nil {
                expected[slots[sequence]!] = .failed(RouteLookupRefusal(errno: Int32(sequence)))
            }
            #expect(answered == expected.count { $0 != nil }, "\(order)")
            #expect(answers == expected, "\(order)")
        }
    }

    /// What the decoder makes of each message in `bytes` as a route-lookup answer.
    static func routeLookupResults(in bytes: [UInt8]) -> [RouteLookupResult?] {
        bytes.withUnsafeBytes { buffer in
            var found: [RouteLookupResult?] = []
            NetlinkFrame.forEach(in: buffer) { found.append(NetlinkDecoder.routeLookupResult(for: $0)) }
            return found
        }
    }

    static let codes: [(Int32, Int32)] = [
        (-ENETUNREACH, ENETUNREACH), (0, 0), (-4095, 4095), (-4096, EPROTO), (1, EPROTO), (.min, EPROTO), (.max, EPROTO),
    ]

    @Test(arguments: codes)
    func errorNumbersAreTheKernelsOrEPROTO(code: Int32, errno expected: Int32) {
        var bytes = Self.errorOfInt32Min
        withUnsafeBytes(of: code.littleEndian) { bytes.replaceSubrange(16..<20, with: $0) }
        let number = bytes.withUnsafeBytes { buffer -> Int32? in
            var found: Int32?
            NetlinkFrame.forEach(in: buffer) { found = $0.errorNumber }
            return found
        }
        #expect(number == expected)
    }

    /// A process that may send to our port (root can; the kernel refuses
    /// anyone else) forges a route notification: it must never become an event.
    /// In a network namespace of its own, where nothing else happens, so any
    /// event read is the forged one.
    @Test(.enabled(if: getuid() == 0, "only root may send netlink unicasts to another process's port"))
    func aDatagramFromAnotherProcessIsDroppedUnread() throws {
        let forged = try onThreadInNewNetworkNamespace(Self.forgeARouteNotification)
        #expect(forged.sent, "the forged datagram was not sent")
        #expect(forged.queued, "the forged datagram never reached the socket's queue")
        #expect(forged.events.isEmpty, "a forged datagram was decoded: \(forged.events)")
    }

    /// Sends an RTM_NEWROUTE to a fresh event socket's port from a socket of
    /// our own, and reads the event socket.
    private static func forgeARouteNotification() throws -> (sent: Bool, queued: Bool, events: [NetlinkEvent]) {
        let events = try NetlinkEventSocket()
        var own = NetlinkAddress()
        var length = socklen_t(MemoryLayout<NetlinkAddress>.size)
        let named = withUnsafeMutablePointer(to: &own) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(events.fileDescriptor, $0, &length) }
        }
        let forger = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)  // NETLINK_ROUTE
        guard named == 0, forger >= 0 else { return (false, false, []) }
        defer { close(forger) }
        // The header and an empty rtmsg: routes are decoded by type alone, so
        // without the sender check this came out as a route change.
        var message = hex("1c000000000000000000000000000000") + [UInt8](repeating: 0, count: 12)
        message[4] = 24  // RTM_NEWROUTE
        var target = NetlinkAddress()
        target.nl_family = UInt16(AF_NETLINK)
        target.nl_pid = own.nl_pid
        let sent = withUnsafePointer(to: &target) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(forger, message, message.count, 0, $0, socklen_t(MemoryLayout<NetlinkAddress>.size))
            }
        }
        var ready = pollfd(fd: events.fileDescriptor, events: Int16(POLLIN), revents: 0)
        let queued = poll(&ready, 1, 1000) == 1
        return (sent == message.count, queued, try events.read(maxDatagrams: 8).events)
    }
}

/// Runs `body` on a thread of its own that has left for a new network
/// namespace, so that the test's other threads stay where they are.
private func onThreadInNewNetworkNamespace<Value>(_ body: @escaping () throws -> Value) throws -> Value {
    var result: Result<Value, any Error>?
    let thread = ThreadBody {
        // Glibc's module hides unshare(2) (a _GNU_SOURCE declaration).
        typealias Unshare = @convention(c) (Int32) -> Int32
        let cloneNewNet: Int32 = 0x4000_0000
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "unshare"),
            unsafeBitCast(symbol, to: Unshare.self)(cloneNewNet) == 0
        else {
            result = .failure(SystemError("unshare(CLONE_NEWNET)"))
            return
        }
        result = Result { try body() }
    }
    try thread.runAndJoin()
    return try result!.get()
}

/// A closure run on a new thread, joined before anything it wrote is read.
private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }

    func runAndJoin() throws {
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<ThreadBody>.fromOpaque(context!).takeUnretainedValue().body()
            return nil
        }, Unmanaged.passUnretained(self).toOpaque())
        guard created == 0 else { throw SystemError("pthread_create", errno: created) }
        pthread_join(thread, nil)
    }
}

/// `struct sockaddr_nl` (<linux/netlink.h>, which only the library's Netlink/ files import).
private struct NetlinkAddress {
    var nl_family: UInt16 = 0
    var nl_pad: UInt16 = 0
    var nl_pid: UInt32 = 0
    var nl_groups: UInt32 = 0
}

private func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}
