import ArgumentParser
import Reachability

/// What `reachd wait-online` waits for, judged afresh on each status: pure,
/// so every combination of options is tested without a network.
///
/// The options follow systemd-networkd-wait-online's, in reachd's terms:
/// without `--interface`, a family (of ``families``) whose route out leaves
/// through an interface not ``ignored``; with them, every listed interface at
/// its state, or one of them with ``any``.
struct OnlineCondition: Equatable {
    /// In the order `status` names the primary path.
    var families: [AddressFamily]
    var interfaces: [InterfaceCondition] = []
    /// What to follow: the summary unless a carrier is waited for, which
    /// only the interface list tells.
    var detail: StatusDetail {
        interfaces.contains { $0.state == .carrier } ? .full : .summary
    }
    var any = false
    var ignored: Set<String> = []
    /// Also wait for the status to be ``NetworkStatus/online``: where the
    /// daemon runs a connectivity check, for it to find full access.
    var connectivity = false
    /// Also wait for name resolution: a configured name server with a
    /// route (the status's `dns` is `ok`), networkd-wait-online's `--dns`
    /// judged by the kernel's routes rather than by configuration alone.
    var dns = false

    /// What met the condition, one line each, for the success message; `nil`
    /// while it is unmet.
    func met(by status: NetworkStatus) -> [String]? {
        // A daemon with a check says `unknown` while its first probe of a
        // path runs, and is online then: wait for its verdict.
        if connectivity, !status.online || (status.check != nil && status.connectivity != .full) { return nil }
        if dns, status.dns.state != .ok { return nil }
        // Said, not left for the reader to guess: with no check to ask
        // (no daemon, or one that runs none) routes alone decided, a portal
        // included.
        let unchecked = connectivity && status.check == nil
            ? ["connectivity: not checked (no connectivity check runs here); routes alone decided"] : []
        let names = unchecked + (dns ? ["dns: \(StatusFormatter.describe(status.dns))"] : [])
        guard !interfaces.isEmpty else {
            return families.lazy.compactMap { status.family($0).path }
                .first { !ignored.contains($0.interface) }
                .map { [Self.online($0)] + names }
        }
        let results = interfaces.map { $0.met(by: status, families: families) }
        if any { return results.lazy.compactMap { $0 }.first.map { [$0] + names } }
        return results.allSatisfy { $0 != nil } ? results.compactMap { $0 } + names : nil
    }

    /// The success line for a route out: "online: IPv4 via eth0, gateway 192.0.2.1".
    static func online(_ path: NetworkPath) -> String {
        "online: \(path.family) via \(StatusFormatter.describe(path))"
    }

    /// What it waited for, for the timeout message.
    var description: String {
        let what = families == [.ipv4] ? "IPv4" : families == [.ipv6] ? "IPv6" : "the network"
        let check = (connectivity ? ", and the connectivity check to find full access" : "")
            + (dns ? ", and names to resolve (a name server with a route, and names not failing)" : "")
        guard !interfaces.isEmpty else {
            return what + (ignored.isEmpty ? "" : " through an interface other than \(ignored.sorted().joined(separator: ", "))") + check
        }
        let listed = interfaces.map { condition in
            switch condition.state {
            case .carrier: "carrier on \(condition.name)"
            case .routable: "\(what) through \(condition.name)"
            }
        }
        return (interfaces.count == 1 ? "" : any ? "any of: " : "all of: ") + listed.joined(separator: ", ") + check
    }
}

/// `--interface NAME[:STATE]`.
struct InterfaceCondition: Equatable {
    /// The states an interface can be waited for in, weakest first.
    enum State: String, CaseIterable {
        /// Up, with carrier: the cable is in, the radio associated.
        case carrier
        /// The kernel's route out (in a family waited for) leaves through it.
        case routable
    }

    var name: String
    var state: State = .routable

    /// Parses `NAME` or `NAME:STATE`, saying what is wrong otherwise.
    static func parse(_ argument: String) throws -> InterfaceCondition {
        let parts = argument.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0])
        guard !name.isEmpty else { throw ValidationError("--interface needs a name, as in eth0 or eth0:carrier; got \"\(argument)\".") }
        guard parts.count == 2 else { return InterfaceCondition(name: name) }
        guard let state = State(rawValue: String(parts[1])) else {
            let states = State.allCases.map(\.rawValue).joined(separator: " or ")
            throw ValidationError("--interface \(argument): unknown state \"\(parts[1])\"; use \(states).")
        }
        return InterfaceCondition(name: name, state: state)
    }

    func met(by status: NetworkStatus, families: [AddressFamily]) -> String? {
        switch state {
        case .carrier:
            guard let link = status.interfaces.first(where: { $0.name == name }), link.up && link.carrier else { return nil }
            return "\(name): carrier"
        case .routable:
            return families.lazy.compactMap { status.family($0).path }.first { $0.interface == name }
                .map(OnlineCondition.online)
        }
    }
}
