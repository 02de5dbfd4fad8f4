import ArgumentParser
import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// `reachd`: the network reachability daemon and its command-line client.
@main
struct ReachdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachd",
        abstract: "Network reachability from the kernel's own routing decisions.",
        discussion: """
            reachd answers "is this host online?" the way the kernel would route a \
            packet: policy rules, route types and the carrier of the egress link. \
            A daemon publishes changes over a Unix socket; without one, every \
            command computes the answer in-process from netlink.

            Exit codes: 0 online (or success), 1 not online (or timed out), \
            2 usage or internal error.

            Examples:
              reachd status
              reachd monitor --json
              reachd wait-online --timeout 10 --ipv4
              reachd daemon --log-level debug
            """,
        version: ReachdVersion.current,
        subcommands: [
            StatusCommand.self, CheckCommand.self, ReachCommand.self, MonitorCommand.self, WaitOnlineCommand.self,
            DaemonCommand.self,
        ]
    )

    /// Runs the command with `nm-online`'s exit codes: a usage error or a failure
    /// exits 2, because 1 already means "not online" to scripts.
    static func main() async {
        do {
            var command = try parseAsRoot()
            // The daemon picks its own form and level; a client's warnings (a
            // daemon that stopped answering, say) quote the daemon's bytes and
            // must be escaped the same way.
            if !(command is DaemonCommand) {
                LoggingSystem.bootstrap { _ in DaemonLogHandler(form: .terminal) }
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let code as ExitCode {
            Glibc.exit(code.rawValue)
        } catch {
            if exitCode(for: error) == .success {
                exit(withError: error)
            }
            Console.error(fullMessage(for: error))
            Glibc.exit(ExitCode.internalError.rawValue)
        }
    }
}
