import ArgumentParser
import Reachability

#if canImport(Glibc)
import Glibc
#endif

struct WaitOnlineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait-online",
        abstract: "Wait until the host has a route out.",
        discussion: """
            Exits 0 as soon as the host is online by routes (in the given family, \
            through the given interfaces), 1 when the timeout passes first. Routes \
            only, as systemd-networkd-wait-online: behind a captive portal it \
            returns, while `reachd status` exits 1; --connectivity waits for the \
            daemon's connectivity check to find full access too. Event-driven: it \
            waits on the daemon's notifications or on netlink, never polls. The \
            options are systemd-networkd-wait-online's, in reachd's terms.

            Examples:
              reachd wait-online
              reachd wait-online --timeout 0 --ipv6
              reachd wait-online --interface eth0 --quiet
              reachd wait-online -i eth0 -i wlan0 --any
              reachd wait-online -i eth0:carrier
              reachd wait-online --ignore tun0
              reachd wait-online --connectivity
              reachd wait-online --dns
              reachd wait-online --host wiki.corp.example --host 10.8.0.1:22

            With --host, waits until every target is reachable as this user's \
            packets would be routed (see `reachd reach`), not for the host's own \
            default route: for a unit whose server sits behind a VPN.
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
        help: ArgumentHelp(
            "Wait for this interface, in this state: routable (the route out leaves through it; the default) or carrier. Repeatable: all of them, unless --any.",
            valueName: "name[:state]"),
        completion: .custom { _, _, _ in NetworkInterfaces.names() },
        transform: InterfaceCondition.parse)
    var interface: [InterfaceCondition] = []

    @Flag(help: "With several --interface, return when one of them is ready, not all.")
    var any = false

    @Flag(help: "Wait for the daemon's connectivity check to find full access as well (the status's online): not behind a captive portal. Without a check, routes decide.")
    var connectivity = false

    @Flag(help: "Wait for a configured name server to have a route as well (the status's dns is ok): names can be asked. Judged by the kernel's routes, with no query sent, and by the connectivity check where it found names failing.")
    var dns = false

    @Option(
        help: ArgumentHelp("Don't count a route out through this interface (a VPN, a container bridge). Repeatable.",
                           valueName: "name"),
        completion: .custom { _, _, _ in NetworkInterfaces.names() })
    var ignore: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Wait until this server is reachable (HOST, HOST:PORT, [IPV6]:PORT, an address, or an http or https URL: its server) instead of the host being online. Repeatable: all of them.",
            valueName: "target"),
        transform: ReachCommand.destination)
    var host: [Destination] = []

    @Flag(name: [.short, .long], help: "Print nothing.")
    var quiet = false

    func validate() throws {
        if ipv4 && ipv6 {
            throw ValidationError("--ipv4 and --ipv6 exclude each other; give neither to accept either family.")
        }
        guard SecondsRange.waitTimeout.duration(timeout) != nil else {
            throw ValidationError("--timeout must be \(SecondsRange.waitTimeout), not \(timeout).")
        }
        if !host.isEmpty, !interface.isEmpty || !ignore.isEmpty || any || connectivity || dns {
            throw ValidationError("--host waits for servers; --interface, --ignore, --any, --connectivity and --dns for the host's route out; pick one.")
        }
        if any, interface.isEmpty {
            throw ValidationError("--any returns when one of several --interface is ready; name them with -i, or leave out --any.")
        }
        try ReachCommand.checkFamily(of: host, ipv4 ? .ipv4 : ipv6 ? .ipv6 : nil)
        if let both = interface.first(where: { ignore.contains($0.name) }) {
            throw ValidationError("\(both.name) is both waited for (--interface) and ignored (--ignore); pick one.")
        }
    }

    /// In the order `status` names the primary path: IPv6 first, as an RFC 6724
    /// client would try it, so both commands name the same path.
    var families: [AddressFamily] {
        ipv4 ? [.ipv4] : ipv6 ? [.ipv6] : [.ipv6, .ipv4]
    }

    /// The validated timeout; `nil` waits forever.
    var timeoutDuration: Duration? {
        SecondsRange.waitTimeout.duration(timeout).flatMap { $0 == .zero ? nil : $0 }
    }

    var condition: OnlineCondition {
        OnlineCondition(
            families: families, interfaces: interface, any: any, ignored: Set(ignore), connectivity: connectivity, dns: dns)
    }

    func run() throws {
        if !host.isEmpty { return try waitForHosts() }
        let condition = condition
        let deadline = timeoutDuration.map { ContinuousClock.now + $0 }
        var met: [String]?
        try connection.follow(status: condition.detail, announcingSource: !quiet, until: deadline) { update in
            guard case .status(let update) = update, let status = try? update.status() else { return true }
            met = condition.met(by: status)
            return met == nil
        }
        guard let met else {
            if !quiet { Console.error("reachd: timed out after \(timeout) s waiting for \(condition.description)") }
            throw ExitCode.notOnline
        }
        if !quiet { met.forEach(Console.out) }
    }

    /// Waits until every `--host` target is reachable, on the daemon's
    /// watches or in-process, as the source allows.
    private func waitForHosts() throws {
        let family: AddressFamily? = ipv4 ? .ipv4 : ipv6 ? .ipv6 : nil
        let keys = host.map { DestinationKey($0, uid: nil, family: family) }
        var answers: [DestinationKey: DestinationStatus] = [:]
        try connection.follow(
            status: nil, destinations: keys, announcingSource: !quiet, until: timeoutDuration.map { .now + $0 }
        ) { update in
            if case .destination(let key, let status, _) = update { answers[key] = status }
            return !keys.allSatisfy { answers[$0]?.isReachable == true }
        }
        let latest = keys.map { answers[$0] }
        let waiting = zip(host, latest).filter { $0.1?.isReachable != true }
        guard waiting.isEmpty else {
            if !quiet {
                let states = waiting.map { destination, status in
                    status.map(StatusFormatter.destination) ?? "\(destination) (no answer)"
                }
                Console.error("reachd: timed out after \(timeout) s waiting for \(states.joined(separator: "; "))")
            }
            throw ExitCode.notOnline
        }
        if !quiet { latest.compactMap { $0 }.map(StatusFormatter.destination).forEach(Console.out) }
    }
}
