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
///
/// The queue is fair between the users who ask (as dbus-broker charges each
/// user its own quota): each user's names wait in a queue of their own,
/// threads are handed out to the users in turn, and one user runs at most
/// ``perUserThreads`` lookups at once, so that a user who asks for names
/// whose server never answers holds two threads, never every one, and
/// another user's name from `/etc/hosts` starts at once. A name nobody waits
/// for any more leaves the queue (``cancel(_:for:)``); one already running
/// cannot be stopped, and its answer is dropped by the owner.
final class HostResolver: Sendable {
    /// Who asks: a client's uid, or `nil` for the asking process itself.
    typealias User = UInt32?

    /// Addresses kept per name: the first ones in the resolver's order
    /// (RFC 6724's), which is the order a client tries them.
    static let maximumAddresses = 8
    /// Names resolved at once, in all; the rest wait their turn.
    let maximumThreads: Int
    /// Names one user's queue may run at once.
    let perUserThreads: Int

    /// Readable when answers are waiting: poll it, then ``takeAnswers()``.
    let wake: WakeSignal
    private let state = Mutex(State())

    private struct State {
        /// Each user's names waiting for a thread, in the order asked.
        var queues: [User: [String]] = [:]
        /// The users with names waiting or running, in turn: the next
        /// thread goes to the first with a name waiting who may run one
        /// more, who then goes to the back.
        var turn: [User] = []
        /// The names resolving, each charged to the user it was taken for.
        var running: [String: User] = [:]
        var runningPerUser: [User: Int] = [:]
        /// Asked for again while resolving, and by whom: what changed
        /// meanwhile (a new resolv.conf) may not be in the answer under way.
        var rerun: [String: Set<User>] = [:]
        var answers: [(host: String, answer: Answer)] = []
    }

    /// What the resolver said about one name.
    enum Answer: Sendable, Hashable {
        case addresses([IPAddress])
        case failed(DestinationReason)
    }

    /// The blocking lookup; tests give one they control.
    private let lookUp: @Sendable (String) -> Answer

    init(
        maximumThreads: Int = 16, perUserThreads: Int = 2,
        lookUp: @escaping @Sendable (String) -> Answer = HostResolver.lookUp
    ) throws(SystemError) {
        self.maximumThreads = maximumThreads
        self.perUserThreads = perUserThreads
        self.lookUp = lookUp
        wake = try WakeSignal()
    }

    /// Queues `host` for `user`, unless that user has it queued already. A
    /// name asked for while it resolves gets the answer under way, then a
    /// fresh one: it is asked for again because something the first lookup
    /// read may have changed.
    func resolve(_ host: String, for user: User = nil) {
        let start: [(String, User)] = state.withLock { state in
            if state.running[host] != nil {
                state.rerun[host, default: []].insert(user)
                return []
            }
            guard state.queues[user]?.contains(host) != true else { return [] }
            state.queues[user, default: []].append(host)
            if !state.turn.contains(user) { state.turn.append(user) }
            return Self.takeStartable(&state, limits: (maximumThreads, perUserThreads))
        }
        for (host, user) in start { startThread(for: host, user) }
    }

    /// `user` no longer waits for `host`: it leaves that user's queue, and
    /// is not asked for again for them once it has resolved.
    func cancel(_ host: String, for user: User = nil) {
        state.withLock { state in
            state.queues[user]?.removeAll { $0 == host }
            if state.queues[user]?.isEmpty == true { state.queues[user] = nil }
            state.rerun[host]?.remove(user)
            if state.rerun[host]?.isEmpty == true { state.rerun[host] = nil }
            Self.dropIdleUsers(&state)
        }
    }

    /// The answers that arrived since the last call, in arrival order.
    func takeAnswers() -> [(host: String, answer: Answer)] {
        wake.drain()
        return state.withLock { state in
            defer { state.answers.removeAll() }
            return state.answers
        }
    }

    /// Names waiting for a thread, in all (for tests).
    var queued: Int { state.withLock { $0.queues.values.reduce(0) { $0 + $1.count } } }

    /// The names to start now, each taken off its user's queue in turn,
    /// while threads and that user's share allow.
    private static func takeStartable(_ state: inout State, limits: (total: Int, perUser: Int)) -> [(String, User)] {
        var started: [(String, User)] = []
        while state.running.count < limits.total,
            let next = state.turn.firstIndex(where: {
                state.queues[$0] != nil && state.runningPerUser[$0, default: 0] < limits.perUser
            })
        {
            let user = state.turn.remove(at: next)
            state.turn.append(user)
            let host = state.queues[user]!.removeFirst()
            // Queued for others too: it runs once, for all of them.
            for other in state.queues.keys { state.queues[other]!.removeAll { $0 == host } }
            state.queues = state.queues.filter { !$0.value.isEmpty }
            state.running[host] = user
            state.runningPerUser[user, default: 0] += 1
            started.append((host, user))
        }
        dropIdleUsers(&state)
        return started
    }

    /// A user with nothing waiting and nothing running leaves the turn.
    private static func dropIdleUsers(_ state: inout State) {
        state.turn.removeAll { state.queues[$0] == nil && state.runningPerUser[$0] == nil }
    }

    private func startThread(for host: String, _ user: User) {
        startDetachedThread { [self] in
            var job = (host: host, user: user)
            while true {
                let answer = lookUp(job.host)
                let startable: [(String, User)] = state.withLock { state in
                    state.running[job.host] = nil
                    let left = state.runningPerUser[job.user, default: 1] - 1
                    state.runningPerUser[job.user] = left > 0 ? left : nil
                    state.answers.append((job.host, answer))
                    for again in state.rerun.removeValue(forKey: job.host) ?? []
                    where state.queues[again]?.contains(job.host) != true {
                        state.queues[again, default: []].append(job.host)
                        if !state.turn.contains(again) { state.turn.append(again) }
                    }
                    return Self.takeStartable(&state, limits: (maximumThreads, perUserThreads))
                }
                wake.signal()
                // The thread carries on with the first rather than ending and
                // starting another; any other gets one of its own.
                guard let next = startable.first else { return }
                for (host, user) in startable.dropFirst() { startThread(for: host, user) }
                job = next
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
                withUnsafeBytes(of: $0.pointee.sin_addr) { IPAddress(family: .ipv4, bytes: $0) }
            }
        case AF_INET6:
            return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin6_addr) { IPAddress(family: .ipv6, bytes: $0) }
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
