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
            whoever asks, so this may wait up to 5 s for the probe. \
            The check runs in the daemon (reachd daemon --check-url URL); without \
            one answering this is an error. A daemon without a check answers with \
            the status as it is (connectivity unknown).
            Exits 0 when online, 1 when not (a portal, limited), 2 on error.

            Examples:
              reachd check
              reachd check --json | jq -r .portal_url
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    /// Long enough for the wait for a probe (up to 5 s), a probe that times
    /// out (5 s by default) and the reply.
    static let timeout: Duration = .seconds(30)

    func validate() throws {
        if connection.noDaemon {
            throw ValidationError("the connectivity check runs in the daemon; leave out --no-daemon.")
        }
    }

    func run() async throws {
        let answer: OneShotQuery.Answer<NetworkStatus>
        do {
            answer = try OneShotQuery(source: .daemon, socketPaths: connection.socketPaths).status(.check, timeout: Self.timeout)
        } catch {
            if case .noDaemonAnswered(let failures) = error {
                Console.error("reachd: \(failures.map(\.description).joined(separator: "; "))")
            }
            Console.error("reachd: the connectivity check runs in the daemon: start one with `reachd daemon --check-url URL`")
            throw ExitCode.internalError
        }
        if output.json, let line = answer.lines?.first {
            Console.json(line)
        } else {
            Console.out(StatusFormatter.summary(answer.value))
        }
        if !answer.value.online { throw ExitCode.notOnline }
    }
}
