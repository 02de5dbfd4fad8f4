import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

struct MonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Print the current status, then one line per change.",
        discussion: """
            Subscribes to the daemon; without one (or when it goes away) it follows \
            netlink in-process. Runs until interrupted.

            A line is printed when whether and how the host is online changes; \
            --json prints every change, an interface coming or going included, \
            unless --summary asks for the statuses without the interface list.

            Examples:
              reachd monitor
              reachd monitor --json | jq -c '{seq, reachability}'
              reachd monitor --json --summary
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    @Flag(help: "With --json: statuses without the interface list, printed only when the rest changes.")
    var summary = false

    @Flag(name: .customLong("trace-netlink"), help: .hidden)
    var traceNetlink = false

    func validate() throws {
        if summary && !output.json {
            throw ValidationError("--summary shapes the statuses --json prints; add --json, or leave out --summary.")
        }
    }

    func run() throws {
        let trace: (@Sendable ([UInt8]) -> Void)? = traceNetlink ? { @Sendable bytes in Self.traceDatagram(bytes) } : nil
        // Read once: an option group's value is copied out of its wrapper,
        // through generic metadata, on every read (perf: 1% of a route change).
        let json = output.json
        let detail: StatusDetail = json && !summary ? .full : .summary
        // The last line printed: its state, and the time it showed.
        var printed: (state: String, at: Date)?
        // In-process, a route change leaves the links' bytes as last printed.
        var memo = StatusLineMemo()
        try connection.follow(status: detail, announcingSource: !traceNetlink, traceDatagrams: trace) { update in
            guard case .status(let update) = update else { return true }
            if json, let line = update.line {
                // The daemon's own bytes, as `status --json` prints them, before decoding.
                Console.json(line)
                return true
            }
            guard let status = try? update.status() else { return true }
            if json {
                Console.json(StatusLineWriter.line(status, memo: &memo))
            } else {
                // A new source's first status (stderr says the switch) in
                // the state last printed is no news. A line's time never
                // goes back: a daemon back from a stop says its state
                // changed before the lines computed in-process meanwhile.
                let state = StatusFormatter.oneLine(status)
                if status.changes.isEmpty, let printed, printed.state == state { return true }
                let at = max(status.changedAt, printed?.at ?? status.changedAt)
                Console.out(StatusFormatter.changeLine(status, at: at))
                printed = (state, at)
            }
            return true
        }
    }

    /// One received datagram as hex on stderr: the raw material of test fixtures.
    private static func traceDatagram(_ bytes: [UInt8]) {
        let hexDigits = Array("0123456789abcdef".utf8)
        var line = Array("netlink ".utf8)
        for byte in bytes {
            line.append(hexDigits[Int(byte >> 4)])
            line.append(hexDigits[Int(byte & 0xf)])
        }
        Console.error(String(decoding: line, as: UTF8.self))
    }
}
