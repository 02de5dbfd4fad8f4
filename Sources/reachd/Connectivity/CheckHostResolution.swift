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
        /// The resolver answered that the name has no address (NXDOMAIN,
        /// no record of the family): names work, this one has none.
        case noAddress
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

    /// One blocking `getaddrinfo` for the check's host and port in `family`.
    private static func lookUp(_ check: ConnectivityCheck, family: AddressFamily) -> Outcome {
        var hints = addrinfo()
        hints.ai_family = family == .ipv4 ? AF_INET : AF_INET6
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(check.host, String(check.port), &hints, &list)
        guard result == 0, let list else {
            let answered = [EAI_NONAME, GetAddressInfoError.noData, GetAddressInfoError.addressFamily]
            return answered.contains(result) ? .noAddress : .failed
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
