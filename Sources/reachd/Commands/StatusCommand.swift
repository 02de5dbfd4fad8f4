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
            from one netlink snapshot and says so on stderr ("source": "embedded" in JSON). \
            A daemon with [watch] targets adds its verdict for each, under "Watched" \
            ("watched" in JSON).
            Exits 0 when online, 1 when not, 2 on error; with an interface, 0 when \
            the host is online through it (a family's route out leaves through it). \
            With an interface, --json prints that link's object alone, as a status's \
            "interfaces" entries are (PROTOCOL.md): name, index, up, carrier, operstate, \
            loopback, addresses, metered.

            Examples:
              reachd status
              reachd status --short
              reachd status --json | jq .primary
              reachd status --socket /tmp/reachd.sock
              reachd status eth0
              reachd status eth0 --json | jq .addresses
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .long, help: "Print one line, as systemd shows the daemon's state (STATUS=).")
    var short = false

    @Argument(
        help: ArgumentHelp("Show this interface only, as networkctl status IFACE does.", valueName: "interface"),
        completion: .custom { _, _, _ in NetworkInterfaces.names() })
    var interface: String?

    func validate() throws {
        if short && output.json { throw ValidationError("--short and --json exclude each other; pick one.") }
        if short && interface != nil { throw ValidationError("--short shows the host's state; leave out the interface, or --short.") }
    }

    func run() async throws {
        let answer: OneShotQuery.Answer<NetworkStatus>
        do {
            answer = try connection.query.status()
        } catch {
            throw connection.failure(error)
        }
        let (status, line) = (answer.value, answer.lines?.first)
        // On stderr in every form, so stdout stays what the form promises.
        if line == nil { connection.reportComputedInProcess(after: answer.daemonFailures) }
        if let interface {
            guard let link = status.interfaces.first(where: { $0.name == interface }) else {
                Console.error("reachd: no interface \(interface); the host has \(status.interfaces.map(\.name.escapingControlCharacters).joined(separator: ", "))")
                throw ExitCode.internalError
            }
            if output.json { Console.json(StatusFormatter.jsonLine(link)) } else { Console.out(StatusFormatter.interface(link, in: status)) }
            // wait-online -i IFACE's rule: a family's route out leaves through it.
            let routed = InterfaceCondition(name: link.name).met(by: status, families: [.ipv6, .ipv4]) != nil
            if !(status.online && routed) { throw ExitCode.notOnline }
            return
        }
        if output.json {
            // The daemon's own bytes: re-encoding would round its timestamps
            // and drop keys a newer daemon added.
            Console.json(line ?? Array(StatusFormatter.jsonLine(status).utf8))
        } else if short {
            Console.out(StatusFormatter.oneLine(status))
        } else {
            Console.out(StatusFormatter.summary(status))
        }
        if !status.online { throw ExitCode.notOnline }
    }
}
