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
        let addresses = Mutex<[CheckServerAddress]??>(nil)
    }

    /// `nil` when the name did not resolve by `deadline`.
    static func resolve(_ check: ConnectivityCheck, family: AddressFamily, by deadline: ContinuousClock.Instant)
        -> [CheckServerAddress]?
    {
        guard let wake = try? WakeSignal() else { return lookUp(check, family: family) }
        let answer = Answer()
        startDetachedThread {
            let addresses = lookUp(check, family: family)
            answer.addresses.withLock { $0 = .some(addresses) }
            wake.signal()
        }
        while true {
            if let settled = answer.addresses.withLock({ $0 }) { return settled }
            guard (try? PollSet.wait(for: wake.fileDescriptor, .readable, until: deadline)) == true else {
                return answer.addresses.withLock { $0 } ?? nil
            }
        }
    }

    /// One blocking `getaddrinfo` for the check's host and port in `family`.
    private static func lookUp(_ check: ConnectivityCheck, family: AddressFamily) -> [CheckServerAddress]? {
        var hints = addrinfo()
        hints.ai_family = family == .ipv4 ? AF_INET : AF_INET6
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(check.host, String(check.port), &hints, &list) == 0, let list else { return nil }
        defer { freeaddrinfo(list) }
        var addresses: [CheckServerAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let address = next {
            addresses.append(CheckServerAddress(address.pointee))
            next = address.pointee.ai_next
        }
        return addresses
    }
}
