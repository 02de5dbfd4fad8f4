import ArgumentParser
import Reachability

#if canImport(Glibc)
import Glibc
#endif

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print the current network status.",
        discussion: """
            Asks the daemon; where none answers, computes the same status in-process \
            from one netlink snapshot and says so on stderr ("source": "embedded" in JSON).
            Exits 0 when online, 1 when not, 2 on error.

            Examples:
              reachd status
              reachd status --short
              reachd status --json | jq .primary
              reachd status --socket /tmp/reachd.sock
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .long, help: "Print one line, as systemd shows the daemon's state (STATUS=).")
    var short = false

    func validate() throws {
        if short && output.json { throw ValidationError("--short and --json exclude each other; pick one.") }
    }

    func run() async throws {
        let (status, line, notice) = try StatusFeed(socketPaths: connection.socketPaths).currentStatus()
        // On stderr in every form, so stdout stays what the form promises.
        if let notice { Console.error("reachd: \(notice)") }
        if output.json {
            // The daemon's own bytes: re-encoding would round its timestamps
            // and drop keys a newer daemon added.
            Console.out(line.map { String(decoding: $0, as: UTF8.self) } ?? StatusFormatter.jsonLine(status))
        } else if short {
            Console.out(StatusFormatter.oneLine(status))
        } else {
            Console.out(StatusFormatter.summary(status))
        }
        if !status.online { throw ExitCode.notOnline }
    }
}
