#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Testing
@testable import Reachability

/// The tracker's bookkeeping with a stand-in for the kernel's lookup: what is
/// asked, what is published, and when nothing is.
@Suite("Destination tracker")
struct DestinationTrackerTests {
    static let server = try! Destination(host: "10.8.0.10", port: 443)
    static let vpn = DestinationPath(
        interface: "wg0", index: 3, family: .ipv4, gateway: nil, table: 51820, source: IPAddress("10.8.0.2")!)
    static let lan = DestinationPath(
        interface: "eth0", index: 2, family: .ipv4, gateway: IPAddress("192.0.2.1"), table: 254,
        source: IPAddress("192.0.2.10")!)

    /// A lookup that answers every query with `path` (or `reason`) and
    /// records what it was asked.
    final class Lookup {
        var path: DestinationPath? = DestinationTrackerTests.lan
        var reason: UnreachableReason?
        /// What the route the kernel found has left, when it expires.
        var lifetime: Duration?
        var asked: [[RouteQuery]] = []
        /// The socket fails instead of answering.
        var fails = false

        func judge(_ queries: [RouteQuery]) throws(NetlinkError) -> [AddressVerdict] {
            asked.append(queries)
            if fails { throw NetlinkError("look up a route", errno: ENOBUFS) }
            let lookup = RouteLookupResult.route(
                type: .unicast, outputInterface: path?.index ?? 0, gateway: path?.gateway, lifetime: lifetime)
            return queries.map {
                AddressVerdict(address: $0.destination, reason: reason, via: reason == nil ? path : nil, lookup: lookup)
            }
        }
    }

    func makeTracker() throws -> DestinationTracker {
        try DestinationTracker(source: .daemon, firstSeq: 100)
    }

    /// A tracker holding the server, answered once at the time returned.
    func trackerAnsweredOnce() throws -> (DestinationTracker, Lookup, DestinationKey, ContinuousClock.Instant) {
        let tracker = try makeTracker()
        let lookup = Lookup()
        let key = DestinationKey(Self.server, uid: nil, family: nil)
        tracker.add(key, now: .now)
        let start = ContinuousClock.now
        _ = try tracker.evaluate(now: start, judge: lookup.judge)
        return (tracker, lookup, key, start)
    }

    @Test func anAnswerIsPublishedOnceAndAgainOnlyWhenItChanges() throws {
        let tracker = try makeTracker()
        let lookup = Lookup()
        let key = DestinationKey(Self.server, uid: 1000, family: nil)
        tracker.add(key, now: .now)
        #expect(try tracker.evaluate(now: .now, judge: lookup.judge) == [key])
        let first = try #require(tracker.status(of: key))
        #expect(first.state == .reachable && first.via?.interface == "eth0" && first.seq == 101)
        #expect(lookup.asked == [[RouteQuery(IPAddress("10.8.0.10")!, uid: 1000, tcpPort: 443)]])

        // A route flood that leaves the answer alone publishes nothing.
        for _ in 0..<100 { #expect(try tracker.evaluate(now: .now, judge: lookup.judge).isEmpty) }
        #expect(tracker.status(of: key)?.seq == 101)

        lookup.path = Self.vpn
        #expect(try tracker.evaluate(now: .now, judge: lookup.judge) == [key])
        let moved = try #require(tracker.status(of: key))
        #expect(moved.via?.interface == "wg0" && moved.via?.table == 51820 && moved.seq == 102)

        lookup.reason = .blackholeRoute
        #expect(try tracker.evaluate(now: .now, judge: lookup.judge) == [key])
        let blackholed = try #require(tracker.status(of: key))
        #expect(blackholed.state == .unreachable && blackholed.reason == .route(.blackholeRoute) && blackholed.via == nil)
        #expect(blackholed.addresses.map(\.reason) == [.route(.blackholeRoute)])
    }

    /// A route decides a lookup only for the addresses its prefix holds: a
    /// batch of routes elsewhere asks nothing, one over a watched address
    /// asks for that address, and a lost answer is asked again whatever
    /// the batch held.
    @Test func aRouteChangeAsksOnlyForTheWatchedAddressesItsPrefixHolds() throws {
        let tracker = try makeTracker()
        let lookup = Lookup()
        let vpnServer = DestinationKey(Self.server, uid: nil, family: nil)
        let lanServer = DestinationKey(try Destination(host: "192.0.2.80", port: 443), uid: nil, family: nil)
        tracker.add(vpnServer, now: .now)
        tracker.add(lanServer, now: .now)
        #expect(Set(try tracker.evaluate(now: .now, judge: lookup.judge)) == [vpnServer, lanServer])
        let prefix = { (text: String, length: Int) in LookupScope.within([RoutePrefix(address: IPAddress(text)!, length: length)!]) }

        lookup.asked = []
        #expect(try tracker.evaluate(moved: prefix("172.16.0.0", 12), now: .now, judge: lookup.judge).isEmpty)
        #expect(try tracker.evaluate(moved: .nothing, now: .now, judge: lookup.judge).isEmpty)
        #expect(lookup.asked.isEmpty, "routes elsewhere ask nothing: \(lookup.asked)")

        lookup.path = Self.vpn
        #expect(try tracker.evaluate(moved: prefix("10.8.0.0", 16), now: .now, judge: lookup.judge) == [vpnServer])
        #expect(lookup.asked == [[RouteQuery(IPAddress("10.8.0.10")!, tcpPort: 443)]])
        #expect(tracker.status(of: lanServer)?.via?.interface == "eth0", "its answer stands")

        // A default route holds both.
        lookup.asked = []
        #expect(try tracker.evaluate(moved: prefix("0.0.0.0", 0), now: .now, judge: lookup.judge) == [lanServer])
        #expect(lookup.asked.first?.count == 2)

        // A route that expires is asked again at its expiry, whatever the batch.
        lookup.lifetime = .seconds(30)
        _ = try tracker.evaluate(now: .now, judge: lookup.judge)
        lookup.asked = []
        _ = try tracker.evaluate(moved: .nothing, now: .now, judge: lookup.judge)
        #expect(lookup.asked.first?.count == 2, "an expiring answer is never kept as it stands")
    }

    /// The kernel tells of an IPv4 route's removal before it unlinks the
    /// route: an answer the removed route may have given (its link and
    /// gateway, under its prefix) is asked again shortly after, once,
    /// whatever batches come meanwhile; one it cannot have given is not.
    @Test func anAnswerARemovedRouteMayHaveGivenIsAskedAgainShortlyOnce() throws {
        let (tracker, lookup, key, start) = try trackerAnsweredOnce()
        let everywhere = RoutePrefix(address: IPAddress("0.0.0.0")!, length: 0)!
        let elsewhere = RoutePrefix(address: IPAddress("172.16.0.0")!, length: 12)!
        let lanHop = RemovedRoute.NextHop(outputInterface: Self.lan.index, gateway: Self.lan.gateway)
        let lanDefault = RemovedRoute(prefix: everywhere, nextHop: lanHop)

        _ = try tracker.evaluate(moved: .within([everywhere]), now: start, judge: lookup.judge)
        #expect(tracker.nextDeadline == nil, "an addition sets no time")
        _ = try tracker.evaluate(
            moved: .everything, removedIPv4: [RemovedRoute(prefix: elsewhere, nextHop: lanHop)], now: start,
            judge: lookup.judge)
        #expect(tracker.nextDeadline == nil, "a removal elsewhere sets none")
        let otherLink = RemovedRoute(prefix: everywhere, nextHop: .init(outputInterface: 9, gateway: nil))
        _ = try tracker.evaluate(moved: .everything, removedIPv4: [otherLink], now: start, judge: lookup.judge)
        #expect(tracker.nextDeadline == nil, "nor one through another link")

        _ = try tracker.evaluate(moved: .within([everywhere]), removedIPv4: [lanDefault], now: start, judge: lookup.judge)
        #expect(tracker.nextDeadline == start + RemovalRecheck.settles)
        // Another batch within the time, asking it again, keeps the time.
        _ = try tracker.evaluate(moved: .everything, now: start + .milliseconds(1), judge: lookup.judge)
        #expect(tracker.nextDeadline == start + RemovalRecheck.settles, "a later batch does not settle it")
        lookup.asked = []
        let due = start + RemovalRecheck.settles
        #expect(tracker.takeDue(now: due))
        #expect(try tracker.evaluate(moved: .nothing, now: due, judge: lookup.judge).isEmpty)
        #expect(lookup.asked.count == 1, "asked again at the time set")
        #expect(tracker.nextDeadline == nil, "once")

        // The answer moved to a route the removed one is not: nothing more to ask.
        lookup.path = Self.vpn
        #expect(try tracker.evaluate(moved: .within([everywhere]), removedIPv4: [lanDefault], now: due, judge: lookup.judge) == [key])
        #expect(tracker.nextDeadline == nil)
        // A removed route with several next hops may have given any answer under it.
        _ = try tracker.evaluate(
            moved: .everything, removedIPv4: [RemovedRoute(prefix: everywhere, nextHop: nil)], now: due, judge: lookup.judge)
        #expect(tracker.nextDeadline == due + RemovalRecheck.settles)
    }

    @Test func watchesOfOneAddressShareOneLookup() throws {
        let tracker = try makeTracker()
        let lookup = Lookup()
        let mine = DestinationKey(Self.server, uid: 1000, family: nil)
        let again = DestinationKey(Self.server, uid: 1000, family: .ipv4)
        let theirs = DestinationKey(Self.server, uid: 1001, family: nil)
        for key in [mine, mine, again, theirs] { tracker.add(key, now: .now) }
        #expect(tracker.count == 3)
        _ = try tracker.evaluate(now: .now, judge: lookup.judge)
        // One query per address, uid and port: the two of uid 1000 share theirs.
        #expect(lookup.asked.map(\.count) == [2])
        tracker.remove(mine)
        #expect(tracker.status(of: mine) != nil, "one holder is left")
        tracker.remove(mine)
        #expect(tracker.status(of: mine) == nil && tracker.count == 2)
    }

    @Test func anAddressOfTheWrongFamilyIsNoAddressAndNeedsNoLookup() throws {
        let tracker = try makeTracker()
        let lookup = Lookup()
        let key = DestinationKey(Self.server, uid: nil, family: .ipv6)
        tracker.add(key, now: .now)
        _ = try tracker.evaluate(now: .now, judge: lookup.judge)
        #expect(tracker.status(of: key)?.state == .unresolved && tracker.status(of: key)?.reason == .noAddress)
        #expect(lookup.asked.isEmpty)
    }

    @Test func aNameIsPendingUntilItResolvesAndTimesOutWithoutAnAnswer() throws {
        let tracker = try DestinationTracker(source: .inProcess, firstSeq: 0, resolutionTimeout: .seconds(5))
        let lookup = Lookup()
        let start = ContinuousClock.now
        let key = DestinationKey(try Destination(host: "pending.example"), uid: nil, family: nil)
        tracker.add(key, now: start)
        #expect(tracker.isPending(key))
        #expect(tracker.nextDeadline == start + .seconds(5))
        _ = try tracker.evaluate(now: .now, judge: lookup.judge)
        #expect(tracker.status(of: key)?.state == .pending && lookup.asked.isEmpty)

        #expect(!tracker.takeDue(now: start + .seconds(4)))
        #expect(tracker.takeDue(now: start + .seconds(5)))
        #expect(tracker.nextDeadline == nil, "a name with an answer has no deadline")
        _ = try tracker.evaluate(now: .now, judge: lookup.judge)
        let timedOut = try #require(tracker.status(of: key))
        #expect(timedOut.state == .unresolved && timedOut.reason == .timeout && timedOut.addresses.isEmpty)
    }

    /// A user whose threads are held by names that never resolve watches a
    /// name last: it waits behind them, and times out for that user. Another
    /// user who asks for it later waits in their own turn, from their own
    /// request, and gets the answer: before, the name was `timeout` for
    /// everyone, at once, until the first user's queue reached it.
    @Test func aNameThatTimedOutForOneUserIsResolvedInAnothersTurn() throws {
        let release = DispatchSemaphore(value: 0)
        defer { for _ in 0..<2 { release.signal() } }
        let resolver = try HostResolver(maximumThreads: 4, perUserThreads: 2) { host in
            if host.hasPrefix("slow") { release.wait() }
            return .addresses([IPAddress("192.0.2.80")!])
        }
        let tracker = try DestinationTracker(source: .daemon, firstSeq: 0, resolutionTimeout: .seconds(5), resolver: resolver)
        let lookup = Lookup()
        let start = ContinuousClock.now
        for name in ["slow1.example", "slow2.example", "victim.example"] {
            tracker.add(DestinationKey(try Destination(host: name), uid: 65534, family: nil), now: start)
        }
        let attackers = DestinationKey(try Destination(host: "victim.example"), uid: 65534, family: nil)
        #expect(tracker.takeDue(now: start + .seconds(5)))
        _ = try tracker.evaluate(now: start + .seconds(5), judge: lookup.judge)
        #expect(tracker.status(of: attackers)?.reason == .timeout, "behind its own slow names")

        let victims = DestinationKey(try Destination(host: "victim.example"), uid: 4242, family: nil)
        tracker.add(victims, now: start + .seconds(6))
        _ = try tracker.evaluate(now: start + .seconds(6), judge: lookup.judge)
        #expect(tracker.status(of: victims)?.state == .pending, "its own wait, not the other user's timeout")
        var descriptor = pollfd(fd: tracker.resolverDescriptor, events: Int16(POLLIN), revents: 0)
        var answered = false
        while !answered, poll(&descriptor, 1, 5000) == 1 { answered = tracker.collectResolutions() }
        #expect(answered, "resolved in the second user's turn")
        _ = try tracker.evaluate(now: start + .seconds(6), judge: lookup.judge)
        #expect(tracker.status(of: victims)?.state == .reachable)
        #expect(tracker.status(of: attackers)?.state == .reachable, "the answer is everyone's once it comes")
    }

    /// A route that expires is looked up again just after it does, though
    /// no notification comes; one that does not sets no deadline at all.
    @Test func anExpiringRouteIsLookedUpAgainAtItsExpiry() throws {
        let (tracker, lookup, key, start) = try trackerAnsweredOnce()
        #expect(tracker.nextDeadline == nil, "no expiring route: no timer")

        lookup.lifetime = .seconds(3)
        _ = try tracker.evaluate(now: start, judge: lookup.judge)
        let due = try #require(tracker.nextDeadline)
        #expect(due > start + .seconds(3) && due < start + .seconds(3) + .milliseconds(100), "just after the expiry")
        #expect(!tracker.takeDue(now: start + .seconds(2)))
        #expect(tracker.takeDue(now: due), "due: look up again")

        // Refreshed (a new router advertisement): the answer is the same, so
        // nothing is published, and the next expiry is set.
        lookup.lifetime = .seconds(3)
        #expect(try tracker.evaluate(now: due, judge: lookup.judge).isEmpty)
        #expect(try #require(tracker.nextDeadline) > due + .seconds(3))
        // Gone: no route, no timer.
        lookup.lifetime = nil
        lookup.reason = .noRoute
        #expect(try tracker.evaluate(now: due + .seconds(3), judge: lookup.judge) == [key])
        #expect(tracker.nextDeadline == nil)
    }

    /// The review found a daemon spinning after a one-shot `reach`: the
    /// watch went, its route's expiry stayed, and a deadline in the past
    /// made every wait return at once.
    @Test func theLastHolderGoneItsRoutesExpiryWakesNoOne() throws {
        let tracker = try makeTracker()
        let lookup = Lookup()
        lookup.lifetime = .seconds(1800)
        let key = DestinationKey(Self.server, uid: 1000, family: nil)
        tracker.add(key, now: .now)
        _ = try tracker.evaluate(now: .now, judge: lookup.judge)
        #expect(tracker.nextDeadline != nil)
        tracker.remove(key)
        #expect(tracker.isEmpty)
        #expect(tracker.nextDeadline == nil, "no watch, no timer")
    }

    /// A lookup that fails once the route expired is asked again a second
    /// later, not at every wake-up (which would be at once, for ever).
    @Test func aLookupThatFailsAtTheExpiryIsAskedAgainInASecond() throws {
        let tracker = try makeTracker()
        let lookup = Lookup()
        lookup.lifetime = .seconds(3)
        let key = DestinationKey(Self.server, uid: nil, family: nil)
        tracker.add(key, now: .now)
        let start = ContinuousClock.now
        _ = try tracker.evaluate(now: start, judge: lookup.judge)
        let due = try #require(tracker.nextDeadline)
        #expect(tracker.takeDue(now: due))
        lookup.fails = true
        #expect(throws: NetlinkError.self) { try tracker.evaluate(now: due, judge: lookup.judge) }
        #expect(tracker.nextDeadline == due + RouteLookupResult.askAgainAfterFailure)
        lookup.fails = false
        lookup.lifetime = nil
        _ = try tracker.evaluate(now: due + .seconds(1), judge: lookup.judge)
        #expect(tracker.nextDeadline == nil)
    }

    /// The lifetime counts from when the kernel answered, not from the
    /// wake-up: many lookups take longer than the 20 ms margin, and a timer
    /// that fired before the expiry would find the route with 0 ticks left,
    /// which reads as "never expires".
    @Test func aLifetimeCountsFromTheAnswer() throws {
        let tracker = try makeTracker()
        let lookup = Lookup()
        lookup.lifetime = .seconds(3)
        let key = DestinationKey(Self.server, uid: nil, family: nil)
        tracker.add(key, now: .now)
        let wokeUp = ContinuousClock.now
        let answered = wokeUp + .milliseconds(80)
        _ = try tracker.evaluate(now: wokeUp, judge: lookup.judge, answeredAt: { answered })
        let due = try #require(tracker.nextDeadline)
        #expect(due > answered + .seconds(3), "\(due - answered) after the answer")
    }

    @Test func localhostResolvesOnTheResolversThread() async throws {
        let tracker = try makeTracker()
        let lookup = Lookup()
        let key = DestinationKey(try Destination(host: "localhost", port: 22), uid: 0, family: .ipv4)
        tracker.add(key, now: .now)
        var descriptor = pollfd(fd: tracker.resolverDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&descriptor, 1, 5000) == 1, "the resolver signals its answer")
        #expect(tracker.collectResolutions())
        _ = try tracker.evaluate(now: .now, judge: lookup.judge)
        #expect(tracker.status(of: key)?.addresses.map(\.address) == ["127.0.0.1"])
        #expect(tracker.status(of: key)?.target == "localhost:22")
    }
}
