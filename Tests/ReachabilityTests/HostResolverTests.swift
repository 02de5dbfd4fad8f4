import Dispatch
import Synchronization
import Testing
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
    @Test func aNameAskedForWhileItResolvesIsLookedUpAgain() throws {
        let release = DispatchSemaphore(value: 0)
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
        resolver.resolve("api.example.com")
        while lookups.withLock({ $0 }) == 0 { usleep(1000) }
        resolver.resolve("api.example.com")
        release.signal()

        var answers: [HostResolver.Answer] = []
        var descriptor = pollfd(fd: resolver.wake.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while answers.count < 2, poll(&descriptor, 1, 5000) == 1 {
            answers += resolver.takeAnswers().map(\.answer)
        }
        #expect(answers == [.failed(.nxdomain), .addresses([IPAddress("192.0.2.7")!])])
        #expect(lookups.withLock { $0 } == 2)
    }
}
