/// Judges name resolution from the kernel's answers alone: each configured
/// name server's route, as the asker's packets would take it, with no
/// packet sent. Pure: servers and route verdicts in, the `dns` block out.
enum DNSEvaluator {
    /// `ok` when one server is routable, `none` when none is configured,
    /// `unknown` while none is routable and a server's route answer was
    /// lost (asked again a second later), `unroutable` when none has a
    /// route. `verdicts`: each server's, in the resolver's order.
    static func evaluate(_ verdicts: [AddressVerdict]) -> DNSStatus {
        let judged = verdicts.map { verdict in
            DNSServer(
                address: verdict.address.description, state: verdict.state, reason: verdict.reason,
                interface: verdict.via?.interface)
        }
        if judged.isEmpty { return DNSStatus(state: .none, servers: []) }
        let state: DNSState =
            if judged.contains(where: { $0.state == .reachable }) { .ok }
            else if judged.contains(where: { $0.state == .unknown }) { .unknown }
            else { .unroutable }
        return DNSStatus(state: state, servers: judged)
    }

    /// `routed` (this evaluator's verdict) with what the connectivity check
    /// found: a resolver with a route is `failing` while the check saw names
    /// fail on a working path, and `ok` again once it did not.
    static func evaluate(_ routed: DNSStatus, namesFail: Bool) -> DNSStatus {
        var status = routed
        switch routed.state {
        case .ok, .failing: status.state = namesFail ? .failing : .ok
        case .none, .unroutable, .unknown, .unrecognized: break
        }
        return status
    }
}
