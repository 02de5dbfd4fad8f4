#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Resolves host names with the system's resolver (`getaddrinfo`, so
/// `/etc/hosts`, nsswitch and systemd-resolved all apply) on a small
/// bounded set of threads, and hands the answers to one event loop through a
/// ``WakeSignal``.
///
/// Written by hand because `getaddrinfo` blocks and has no timeout of its
/// own, and `getaddrinfo_a` reports by signal or by a thread per request.
/// A name the resolver is slow on holds one thread, never the loop; the
/// owner decides when a name has taken too long (``DestinationTracker``) and a
/// late answer still arrives. A thread exists only while a name resolves:
/// nothing runs when nothing resolves.
final class HostResolver: Sendable {
    /// Addresses kept per name: the first ones in the resolver's order
    /// (RFC 6724's), which is the order a client tries them.
    static let maximumAddresses = 8
    /// Names resolved at once; the rest wait their turn.
    let maximumThreads: Int

    /// Readable when answers are waiting: poll it, then ``takeAnswers()``.
    let wake: WakeSignal
    private let state = Mutex(State())

    private struct State {
        var queue: [String] = []
        var running: Set<String> = []
        /// Asked for again while resolving: what changed meanwhile (a new
        /// resolv.conf) may not be in the answer under way.
        var rerun: Set<String> = []
        var answers: [(host: String, answer: Answer)] = []
    }

    /// What the resolver said about one name.
    enum Answer: Sendable, Hashable {
        case addresses([IPAddress])
        case failed(DestinationReason)
    }

    /// The blocking lookup; tests give one they control.
    private let lookUp: @Sendable (String) -> Answer

    init(maximumThreads: Int = 4, lookUp: @escaping @Sendable (String) -> Answer = HostResolver.lookUp)
        throws(SystemError)
    {
        self.maximumThreads = maximumThreads
        self.lookUp = lookUp
        wake = try WakeSignal()
    }

    /// Queues `host` unless it is queued already. A name asked for while it
    /// resolves gets the answer under way, then a fresh one: it is asked for
    /// again because something the first lookup read may have changed.
    func resolve(_ host: String) {
        let start: String? = state.withLock { state in
            if state.running.contains(host) {
                state.rerun.insert(host)
                return nil
            }
            guard !state.queue.contains(host) else { return nil }
            state.queue.append(host)
            return Self.nextToStart(&state, limit: maximumThreads)
        }
        if let start { startThread(for: start) }
    }

    /// The answers that arrived since the last call, in arrival order.
    func takeAnswers() -> [(host: String, answer: Answer)] {
        wake.drain()
        return state.withLock { state in
            defer { state.answers.removeAll() }
            return state.answers
        }
    }

    private static func nextToStart(_ state: inout State, limit: Int) -> String? {
        guard state.running.count < limit, !state.queue.isEmpty else { return nil }
        let host = state.queue.removeFirst()
        state.running.insert(host)
        return host
    }

    private func startThread(for host: String) {
        startDetachedThread { [self] in
            var host = host
            while true {
                let answer = lookUp(host)
                let next: String? = state.withLock { state in
                    state.running.remove(host)
                    state.answers.append((host, answer))
                    if state.rerun.remove(host) != nil { state.queue.append(host) }
                    return Self.nextToStart(&state, limit: maximumThreads)
                }
                wake.signal()
                // The thread carries on with the queue rather than ending and
                // starting another.
                guard let next else { return }
                host = next
            }
        }
    }

    /// One blocking `getaddrinfo`, for both families (AF_UNSPEC) and without
    /// AI_ADDRCONFIG: that flag hides the IPv6 addresses of a name while the
    /// host has no global IPv6 address yet, and an IPv6-only VPN coming up
    /// would then go unnoticed until the next resolution.
    static func lookUp(_ host: String) -> Answer {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(host, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard result == 0 else {
            switch result {
            case EAI_NONAME: return .failed(.nxdomain)
            case noData, addressFamily: return .failed(.noAddress)
            default: return .failed(.resolverFailed)
            }
        }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry, addresses.count < maximumAddresses {
            entry = current.pointee.ai_next
            guard let address = Self.address(of: current.pointee), !addresses.contains(address) else { continue }
            addresses.append(address)
        }
        return addresses.isEmpty ? .failed(.noAddress) : .addresses(addresses)
    }

    private static let noData = GetAddressInfoError.noData
    private static let addressFamily = GetAddressInfoError.addressFamily

    private static func address(of entry: addrinfo) -> IPAddress? {
        guard let socketAddress = entry.ai_addr else { return nil }
        switch entry.ai_family {
        case AF_INET:
            return socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin_addr) { IPAddress(family: .ipv4, bytes: Array($0)) }
            }
        case AF_INET6:
            return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin6_addr) { IPAddress(family: .ipv6, bytes: Array($0)) }
            }
        default:
            return nil
        }
    }
}

/// glibc's EAI_NODATA and EAI_ADDRFAMILY, which Swift's Glibc module leaves
/// out (they are behind `__USE_GNU`): the resolver answered, with no
/// address of the family asked.
package enum GetAddressInfoError {
    package static let noData: Int32 = -5
    package static let addressFamily: Int32 = -9
}
