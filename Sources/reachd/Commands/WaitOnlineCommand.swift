import ArgumentParser
import Reachability

#if canImport(Glibc)
import Glibc
#endif

struct WaitOnlineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait-online",
        abstract: "Wait until the host is online.",
        discussion: """
            Exits 0 as soon as the host is online (in the given family, through the \
            given interface), 1 when the timeout passes first. Event-driven: it \
            waits on the daemon's notifications or on netlink, never polls.

            Examples:
              reachd wait-online
              reachd wait-online --timeout 0 --ipv6
              reachd wait-online --interface eth0 --quiet
            """)

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .long, help: ArgumentHelp("Seconds to wait; 0 waits forever.", valueName: "seconds"))
    var timeout: Double = 30

    @Flag(name: .long, help: "Wait for IPv4 only.")
    var ipv4 = false

    @Flag(name: .long, help: "Wait for IPv6 only.")
    var ipv6 = false

    @Option(name: .long, help: ArgumentHelp("Wait until the route out leaves through this interface.", valueName: "name"))
    var interface: String?

    @Flag(name: [.short, .long], help: "Print nothing.")
    var quiet = false

    func validate() throws {
        if ipv4 && ipv6 {
            throw ValidationError("--ipv4 and --ipv6 exclude each other; give neither to accept either family.")
        }
        if timeout < 0 || !timeout.isFinite {
            throw ValidationError("--timeout must be 0 (wait forever) or a positive number of seconds, not \(timeout).")
        }
    }

    var families: [AddressFamily] {
        ipv4 ? [.ipv4] : ipv6 ? [.ipv6] : [.ipv4, .ipv6]
    }

    /// The online family (and its path) that satisfies the options, if any.
    func satisfyingPath(in status: NetworkStatus) -> NetworkPath? {
        families.lazy.compactMap { status.family($0).path }
            .first { path in interface.map { path.interface == $0 } ?? true }
    }

    func run() async throws {
        let statuses = connection.statuses(announcingSource: false)
        let found = try await withThrowingTaskGroup(of: NetworkPath?.self) { group in
            group.addTask {
                for try await status in statuses {
                    if let path = satisfyingPath(in: status) { return path }
                }
                return nil
            }
            if timeout > 0 {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(Int64(timeout * 1000)))
                    return nil
                }
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let found else {
            if !quiet {
                let what = ipv4 ? "IPv4" : ipv6 ? "IPv6" : "the network"
                let through = interface.map { " through \($0)" } ?? ""
                Console.error("reachd: timed out after \(timeout)s waiting for \(what)\(through)")
            }
            throw ExitCode.notOnline
        }
        if !quiet {
            Console.out("online: \(found.family) via \(StatusFormatter.describe(found))")
        }
    }
}
