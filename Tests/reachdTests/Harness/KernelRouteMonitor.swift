import TestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `ip -ts monitor route` in a namespace: when the kernel announced each route
/// change. Latencies are measured from these, never from when a test ran a
/// command, whose own start-up on a loaded machine would swamp the figure.
final class KernelRouteMonitor: @unchecked Sendable {
    private let process: Subprocess

    /// Starts the monitor and returns once it sees notifications: a route to
    /// `probe` through `device` is added and deleted until it does. (Each must
    /// be a real change: replacing a route with an identical one notifies no one.)
    init(in network: TestNetwork, probing probe: String, via device: String) async throws {
        process = try Subprocess(["/usr/bin/env", "ip", "-n", network.host, "-ts", "monitor", "route"])
        _ = try await eventually("ip monitor listens") { () -> Bool? in
            try await network.inHost("route add \(probe) dev \(device)", "route del \(probe) dev \(device)")
            return process.outputLines.isEmpty ? nil : true
        }
    }

    deinit { process.signal(SIGTERM) }

    /// When the kernel announced each notification whose line contains `text`, in order.
    func timestamps(of text: String) -> [Date] {
        process.outputLines.filter { $0.contains(text) }.compactMap(Self.timestamp)
    }

    /// "[2026-11-22T06:16:04.438549] default via ...": local time, microseconds.
    static func timestamp(_ line: String) -> Date? {
        guard line.hasPrefix("["), let end = line.firstIndex(of: "]") else { return nil }
        let parts = line[line.index(after: line.startIndex)..<end].split(separator: ".")
        guard parts.count == 2, let fraction = Double("0." + parts[1]) else { return nil }
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = .current
        format.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return format.date(from: String(parts[0]))?.addingTimeInterval(fraction)
    }
}
