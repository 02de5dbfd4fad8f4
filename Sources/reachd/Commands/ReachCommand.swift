import ArgumentParser
import Reachability

struct ReachCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reach",
        abstract: "Say whether this user's packets to a server would go somewhere.",
        discussion: """
            Asks the kernel's route lookup, as this user and for TCP to the port, \
            for every address the target resolves to, and checks the egress link's \
            carrier and the source address: an intranet server behind a VPN is \
            reachable on a host with no default route, a blackholed prefix is not. \
            Route level only: the server may still refuse the connection.

            Asks the daemon; where none answers, computes the answer in-process and \
            says so on stderr. Exits 0 when every target is reachable, 1 when one is \
            not (or when --watch ends), 2 on error.

            Examples:
              reachd reach api.example.com
              reachd reach wiki.corp.example:8443 10.8.0.1:22
              reachd reach '[fd00::10]:443' -6 --json
              reachd reach api.example.com --watch
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: [.customShort("4"), .long], help: "Count only the targets' IPv4 addresses.")
    var ipv4 = false

    @Flag(name: [.customShort("6"), .long], help: "Count only the targets' IPv6 addresses.")
    var ipv6 = false

    @Flag(name: .long, help: "Print each target's answer, then one line per change, until interrupted.")
    var watch = false

    @Argument(
        help: ArgumentHelp(
            "HOST, HOST:PORT, [IPV6]:PORT, an address, or an http or https URL (its server); the port defaults to \(Destination.defaultPort).",
            valueName: "target"),
        transform: Self.destination)
    var targets: [Destination]

    func validate() throws {
        if ipv4 && ipv6 { throw ValidationError("-4 and -6 exclude each other; leave both out for either family.") }
        try Self.checkFamily(of: targets, family)
    }

    /// A target as `reach` and `wait-online --host` take it. A URL names
    /// its server: what a user copies from a browser.
    static func destination(_ target: String) throws -> Destination {
        do {
            return try Destination(target: target)
        } catch {
            throw ValidationError("\(error.description).")
        }
    }

    /// An address of the other family than -4 or -6 allows would only ever
    /// be "no address": say so before asking.
    static func checkFamily(of targets: [Destination], _ family: AddressFamily?) throws {
        guard let family else { return }
        for target in targets {
            guard let literal = target.address?.family, literal != family else { continue }
            throw ValidationError(
                "\(target.host) is an \(literal) address, and -\(family == .ipv4 ? 4 : 6) counts \(family) addresses only; leave out -\(family == .ipv4 ? 4 : 6).")
        }
    }

    private var family: AddressFamily? { ipv4 ? .ipv4 : ipv6 ? .ipv6 : nil }

    func run() throws {
        if watch { try follow() }
        let answers: OneShotQuery.Answer<[DestinationStatus]>
        do {
            answers = try connection.query.destinations(targets, family: family)
        } catch {
            throw connection.failure(error)
        }
        if answers.lines == nil { connection.reportComputedInProcess(after: answers.daemonFailures) }
        for (position, status) in answers.value.enumerated() {
            print(status, line: answers.lines?[position])
        }
        if !answers.value.allSatisfy(\.isReachable) { throw ExitCode.notOnline }
    }

    /// Prints every answer and change until interrupted or the source ends.
    private func follow() throws -> Never {
        let keys = targets.map { DestinationKey($0, uid: nil, family: family) }
        try connection.follow(status: nil, destinations: keys, announcingSource: true) { update in
            if case .destination(_, let status, let line) = update { print(status, line: line) }
            return true
        }
        throw ExitCode.notOnline
    }

    private func print(_ status: DestinationStatus, line: [UInt8]?) {
        if output.json {
            // The daemon's own bytes: keys a newer daemon adds survive.
            Console.json(line ?? DaemonMessage.destination(status).line().dropLast())
        } else {
            Console.out(StatusFormatter.destination(status))
        }
    }
}
