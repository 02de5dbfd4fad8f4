import ArgumentParser
import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Print the current status, then one line per change.",
        discussion: """
            Subscribes to the daemon; without one (or when it goes away) it follows \
            netlink in-process. Runs until interrupted.

            Examples:
              reachd monitor
              reachd monitor --json | jq -c '{seq, reachability}'
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .customLong("trace-netlink"), help: .hidden)
    var traceNetlink = false

    func run() async throws {
        if !traceNetlink { try connection.requireNamedDaemon() }
        let statuses = traceNetlink
            ? EmbeddedMonitor.statuses(logger: Logger(label: "reachd.embedded"), traceDatagrams: Self.traceDatagram)
            : connection.statuses(announcingSource: true)
        var previous: NetworkStatus?
        for try await status in statuses {
            // Across a switch of source the numbering restarts: say what changed
            // only within one source.
            let since = previous?.source == status.source ? previous : nil
            Console.out(output.json ? StatusFormatter.jsonLine(status) : StatusFormatter.changeLine(status, since: since))
            previous = status
        }
    }

    /// One received datagram as hex on stderr: the raw material of test fixtures.
    @Sendable private static func traceDatagram(_ bytes: [UInt8]) {
        let hexDigits = Array("0123456789abcdef".utf8)
        var line = Array("netlink ".utf8)
        for byte in bytes {
            line.append(hexDigits[Int(byte >> 4)])
            line.append(hexDigits[Int(byte & 0xf)])
        }
        Console.error(String(decoding: line, as: UTF8.self))
    }
}
