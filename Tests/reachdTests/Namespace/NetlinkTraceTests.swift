import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `monitor --trace-netlink`, hidden: how Fixtures/record.py records the
/// netlink fixtures the pure tests replay. Each datagram the in-process
/// engine reads goes to stderr in hex, and the statuses are computed
/// in-process whatever daemon runs, so that the trace is of what made them.
@Suite("The netlink trace behind the fixtures", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct NetlinkTraceTests {
    @Test func eachDatagramTheEngineReadsIsPrintedInHex() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGTERM) }
        let monitor = try network.startReachd("monitor", "--trace-netlink", "--json", "--socket", network.socketPath)
        defer { monitor.signal(SIGTERM) }
        _ = try await eventually("the first status") { monitor.outputLines.first }
        try await network.inHost("route del default")
        // A datagram is an nlmsghdr first: its length, then its type, each
        // little-endian; RTM_DELROUTE is 25.
        let deleted = try await eventually("the route's deletion, traced") {
            monitor.errorOutput.split(separator: "\n").first { $0.hasPrefix("netlink ") && $0.dropFirst(16).hasPrefix("1900") }
        }
        #expect(deleted.dropFirst(8).allSatisfy { $0.isHexDigit }, "\(deleted)")
        _ = try await eventually("the status that followed it") {
            monitor.outputLines.last?.contains(#""online":false"#) == true ? true : nil
        }
        #expect(monitor.outputLines.allSatisfy { $0.contains(#""source":"embedded""#) }, "computed in-process: \(monitor.outputLines)")
    }
}
