import Reachability
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The check host's addresses, by a deadline: `getaddrinfo` has none of its
/// own (glibc waits its `timeout:` per server and try, 5 s each by
/// default), so it runs on a thread of its own and the probe stops waiting
/// at the deadline. A late answer is dropped; the thread ends with the
/// resolver's own timeout.
enum CheckHostResolution {
    /// Shared with the resolving thread, which may outlive the wait.
    private final class Answer: Sendable {
        let outcome = Mutex<Outcome?>(nil)
    }

    /// What the resolver said, by the deadline.
    enum Outcome: Equatable, Sendable {
        case addresses([CheckServerAddress])
        /// The resolver answered that the name has no address of the
        /// family, and has one of another: names work, and this family has
        /// nothing to ask (a check host with no AAAA).
        case noAddress
        /// The resolver answered that the name has no address at all
        /// (NXDOMAIN, a mistyped URL, a filter): names work, the check's
        /// host is not there.
        case noSuchName
        /// No answer by the deadline, or the resolver failed (EAI_AGAIN,
        /// EAI_FAIL): names fail.
        case failed
    }

    static func resolve(_ check: ConnectivityCheck, family: AddressFamily, by deadline: ContinuousClock.Instant)
        -> Outcome
    {
        let answer = Answer()
        guard let wake = try? WakeSignal(),
            startDetachedThreadIfPossible({
                let outcome = lookUp(check, family: family)
                answer.outcome.withLock { $0 = outcome }
                wake.signal()
            }) == 0
        else { return lookUp(check, family: family) }
        while true {
            if let settled = answer.outcome.withLock({ $0 }) { return settled }
            guard (try? PollSet.wait(for: wake.fileDescriptor, .readable, until: deadline)) == true else {
                return answer.outcome.withLock { $0 } ?? .failed
            }
        }
    }

    /// Whether the check's host has an address of any family.
    private static func existsInAnyFamily(_ check: ConnectivityCheck) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(check.host, String(check.port), &hints, &list) == 0, let list else { return false }
        freeaddrinfo(list)
        return true
    }

    /// One blocking `getaddrinfo` for the check's host and port in `family`.
    private static func lookUp(_ check: ConnectivityCheck, family: AddressFamily) -> Outcome {
        var hints = addrinfo()
        hints.ai_family = family == .ipv4 ? AF_INET : AF_INET6
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(check.host, String(check.port), &hints, &list)
        guard result == 0, let list else {
            let answered = [EAI_NONAME, GetAddressInfoError.noData, GetAddressInfoError.addressFamily]
            guard answered.contains(result) else { return .failed }
            // glibc says EAI_NONAME both for a name of the other family only
            // (from /etc/hosts) and for one that does not exist: asked for
            // any family, the name tells which.
            return existsInAnyFamily(check) ? .noAddress : .noSuchName
        }
        defer { freeaddrinfo(list) }
        var addresses: [CheckServerAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let address = next {
            addresses.append(CheckServerAddress(address.pointee))
            next = address.pointee.ai_next
        }
        return .addresses(addresses)
    }
}
