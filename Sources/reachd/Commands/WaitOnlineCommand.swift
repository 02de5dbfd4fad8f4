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

    // Takes the next word whatever it looks like, so that `--timeout -1` is
    // answered about the timeout rather than taken for an unknown flag.
    @Option(
        name: [.customShort("t"), .long], parsing: .unconditional,
        help: ArgumentHelp("Seconds to wait; 0 waits forever.", valueName: "seconds"))
    var timeout: String = "30"

    @Flag(name: [.customShort("4"), .long], help: "Wait for IPv4 only.")
    var ipv4 = false

    @Flag(name: [.customShort("6"), .long], help: "Wait for IPv6 only.")
    var ipv6 = false

    @Option(
        name: [.customShort("i"), .long],
        help: ArgumentHelp("Wait until the route out leaves through this interface.", valueName: "name"),
        completion: .custom { _, _, _ in NetworkInterfaces.names() })
    var interface: String?

    @Flag(name: [.short, .long], help: "Print nothing.")
    var quiet = false

    func validate() throws {
        if ipv4 && ipv6 {
            throw ValidationError("--ipv4 and --ipv6 exclude each other; give neither to accept either family.")
        }
        guard let seconds = Double(timeout), seconds >= 0, seconds.isFinite else {
            throw ValidationError("--timeout must be 0 (wait forever) or a positive number of seconds, not \(timeout).")
        }
        _ = seconds
    }

    /// In the order `status` names the primary path: IPv6 first, as an RFC 6724
    /// client would try it, so both commands name the same path.
    var families: [AddressFamily] {
        ipv4 ? [.ipv4] : ipv6 ? [.ipv6] : [.ipv6, .ipv4]
    }

    /// The validated timeout, in seconds; 0 waits forever.
    var timeoutSeconds: Double { Double(timeout) ?? 30 }

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
            if timeoutSeconds > 0 {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(Int64(timeoutSeconds * 1000)))
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
                Console.error("reachd: timed out after \(timeout) s waiting for \(what)\(through)")
            }
            throw ExitCode.notOnline
        }
        if !quiet {
            Console.out("online: \(found.family) via \(StatusFormatter.describe(found))")
        }
    }
}
