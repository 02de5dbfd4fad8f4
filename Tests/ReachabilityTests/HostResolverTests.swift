import Dispatch
import Synchronization
import Testing
import TestSupport
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The resolver's queue, with a lookup the test controls.
@Suite("Host resolver")
struct HostResolverTests {
    /// A name asked for again while it resolves (resolv.conf changed under
    /// it) gets the answer under way and then a fresh one, not only the one
    /// that may predate the change.
    /// A resolver whose first lookup waits for `release` and says
    /// `nxdomain`, and whose later ones answer at once; `lookups()` counts them.
    static func resolverWhoseFirstLookupWaits(for release: DispatchSemaphore) throws
        -> (resolver: HostResolver, lookups: @Sendable () -> Int)
    {
        let lookups = Mutex(0)
        let resolver = try HostResolver { _ in
            let count = lookups.withLock { count in
                count += 1
                return count
            }
            if count == 1 {
                release.wait()
                return .failed(.nxdomain)
            }
            return .addresses([IPAddress("192.0.2.7")!])
        }
        return (resolver, { lookups.withLock { $0 } })
    }

    @Test func aNameAskedForWhileItResolvesIsLookedUpAgain() async throws {
        let release = DispatchSemaphore(value: 0)
        let (resolver, lookups) = try Self.resolverWhoseFirstLookupWaits(for: release)
        resolver.resolve("api.example.com")
        _ = try await eventually("the first lookup", every: .milliseconds(1)) { lookups() > 0 ? true : nil }
        resolver.resolve("api.example.com")
        release.signal()

        var answers: [HostResolver.Answer] = []
        var descriptor = pollfd(fd: resolver.wake.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while answers.count < 2, poll(&descriptor, 1, 5000) == 1 {
            answers += resolver.takeAnswers().map(\.answer)
        }
        #expect(answers == [.failed(.nxdomain), .addresses([IPAddress("192.0.2.7")!])])
        #expect(lookups() == 2)
    }

    /// Waits for `count` answers from `resolver`, 5 s at most.
    static func answers(_ count: Int, from resolver: HostResolver) -> [String] {
        var hosts: [String] = []
        var descriptor = pollfd(fd: resolver.wake.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while hosts.count < count, poll(&descriptor, 1, 5000) == 1 {
            hosts += resolver.takeAnswers().map(\.host)
        }
        return hosts
    }

    /// A user whose names never resolve holds two threads, not every one:
    /// another user's name is answered while theirs still hang.
    @Test func oneUsersSlowNamesLeaveThreadsForAnothersName() throws {
        let release = DispatchSemaphore(value: 0)
        let resolver = try HostResolver(maximumThreads: 4, perUserThreads: 2) { host in
            if host.hasPrefix("slow") { release.wait() }
            return .addresses([IPAddress("192.0.2.7")!])
        }
        // Every slow name let go at the end: none of the resolver's threads
        // is left waiting.
        defer { for _ in 0..<50 { release.signal() } }
        for name in 0..<50 { resolver.resolve("slow\(name).example", for: 65534) }
        resolver.resolve("victim.example", for: 4242)
        #expect(Self.answers(1, from: resolver) == ["victim.example"])
        #expect(resolver.queued == 48, "two of the flood run, the rest wait")
    }

    /// Threads go to the users in turn: one who asked for many names first
    /// does not make another wait for all of them.
    /// A resolver of one thread, one a user, whose name "first" waits for
    /// `gate`; `looked()` lists the names looked up, in order.
    static func oneThreadResolver(gate: DispatchSemaphore) throws -> (resolver: HostResolver, looked: @Sendable () -> [String]) {
        let looked = Mutex<[String]>([])
        let resolver = try HostResolver(maximumThreads: 1, perUserThreads: 1) { host in
            if host == "first" { gate.wait() }
            looked.withLock { $0.append(host) }
            return .failed(.nxdomain)
        }
        return (resolver, { looked.withLock { $0 } })
    }

    @Test func usersTakeTurns() throws {
        let gate = DispatchSemaphore(value: 0)
        let (resolver, order) = try Self.oneThreadResolver(gate: gate)
        resolver.resolve("first", for: 1)
        for name in ["a1", "a2", "a3"] { resolver.resolve(name, for: 1) }
        for name in ["b1", "b2"] { resolver.resolve(name, for: 2) }
        gate.signal()
        _ = Self.answers(6, from: resolver)
        // First come, first queued would be a1, a2, a3, b1, b2.
        #expect(order() == ["first", "a1", "b1", "a2", "b2", "a3"])
    }

    /// A name nobody waits for any more leaves the queue: it is never
    /// looked up, however long the queue ahead of it was.
    @Test func aNameNobodyWaitsForIsNeverLookedUp() throws {
        let gate = DispatchSemaphore(value: 0)
        let (resolver, looked) = try Self.oneThreadResolver(gate: gate)
        resolver.resolve("first", for: 1)
        resolver.resolve("gone", for: 1)
        resolver.resolve("shared", for: 1)
        resolver.resolve("shared", for: 2)
        resolver.cancel("gone", for: 1)
        resolver.cancel("shared", for: 1)
        #expect(resolver.queued == 1, "only user 2's wait for shared is left")
        gate.signal()
        #expect(Self.answers(2, from: resolver) == ["first", "shared"])
        #expect(looked() == ["first", "shared"])
    }

    /// Two users ask for a name again while it resolves, and one of them
    /// goes: the other still gets a fresh answer (the rerun was one user's,
    /// and went with them).
    @Test func aRerunAskedByTwoUsersOutlivesOneOfThem() async throws {
        let release = DispatchSemaphore(value: 0)
        let (resolver, lookups) = try Self.resolverWhoseFirstLookupWaits(for: release)
        resolver.resolve("api.example.com", for: 1)
        _ = try await eventually("the first lookup", every: .milliseconds(1)) { lookups() > 0 ? true : nil }
        resolver.resolve("api.example.com", for: 1)
        resolver.resolve("api.example.com", for: 2)
        resolver.cancel("api.example.com", for: 1)
        release.signal()
        #expect(Self.answers(2, from: resolver) == ["api.example.com", "api.example.com"])
        #expect(lookups() == 2)
    }
}
