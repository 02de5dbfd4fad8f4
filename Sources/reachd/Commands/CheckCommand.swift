import ArgumentParser
import Reachability


struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Run the daemon's connectivity check now and print the result.",
        discussion: """
            Asks the daemon to probe its check URL (after signing in to a captive \
            portal, say) and prints the status once a probe that started after the \
            request has answered. The daemon probes at most once per 5 s on request, \
            whoever asks, so this may wait up to 5 s for the probe, and then for the \
            check's timeout (--check-timeout, 5 s by default), which bounds the whole \
            check, its one retry included. A daemon that does not answer at all is \
            given 1 s, as by every command.
            The check runs in the daemon (the shipped reachd.conf turns it on, or \
            reachd daemon --check-url URL): without one answering this is an error, \
            never computed in-process. A daemon without a check answers with the \
            status as it is (connectivity unknown).
            Exits 0 when online, 1 when not (a portal, limited), 2 on error.

            Examples:
              reachd check
              reachd check --json | jq -r .portal_url
            """)

    @OptionGroup var daemon: SocketOption
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let answer: OneShotQuery.Answer<NetworkStatus>
        do {
            answer = try OneShotQuery(source: .daemon, socketPaths: daemon.socketPaths).status(.check)
        } catch {
            throw daemon.failed(
                error.daemonFailures, inProcess: false,
                starting: " (the shipped reachd.conf turns the check on; else add --check-url URL)")
        }
        if output.json, let line = answer.lines?.first {
            Console.json(line)
        } else {
            Console.out(StatusFormatter.summary(answer.value))
        }
        if !answer.value.online { throw ExitCode.notOnline }
    }
}
