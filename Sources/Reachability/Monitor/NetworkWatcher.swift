#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Follows the kernel's link, address, route and rule notifications and turns
/// them into published statuses. Not thread-safe: one event loop owns it
/// (the daemon's, or a client session's, through a ``NetworkEngine``).
///
/// Memory and start-up cost depend on links and addresses only: routes are
/// never dumped or stored. A route notification means "ask the kernel's
/// route lookup again" for the addresses its prefix holds, once per batch
/// of messages read (``LookupScope``); a link, address or rule, every lookup.
package final class NetworkWatcher {
    private var events: NetlinkEventSocket
    private var queries: NetlinkQuerySocket
    private var trace: (([UInt8]) -> Void)?
    private var table = InterfaceTable()
    private var publisher: StatusPublisher
    private let logger: Logger
    /// Datagrams read per batch before re-evaluating, so that a long flood still
    /// re-evaluates regularly and the event loop can serve its clients.
    private let batchLimit = 256

    /// How many times the event socket overran and was resynchronised.
    package private(set) var resyncCount = 0

    /// When the first route behind the published paths or the name servers
    /// expires, and the lookups must be asked again: the kernel stops using
    /// an expired route but says nothing until its garbage collection runs,
    /// up to 30 s later.
    /// `nil` while no such route expires: no timer.
    package private(set) var routesExpire: ContinuousClock.Instant?

    /// What the batches read (and the resynchronisations) can have moved
    /// since ``destinationsEvaluated()``, whether or not the host's status
    /// changed: the watched destinations it holds are evaluated again.
    private(set) var movedForDestinations: LookupScope = .nothing
    /// The IPv4 routes removed in those batches: an answer one of them may
    /// have given is asked again shortly (``RemovalRecheck``).
    package private(set) var removedForDestinations: Set<RemovedRoute> = []

    /// The watched destinations were evaluated against everything read so far.
    func destinationsEvaluated() {
        movedForDestinations = .nothing
        removedForDestinations = []
    }

    /// The lookups the published status rests on, and their questions:
    /// an evaluation asks again only those a batch can have moved.
    private var lastLookups: (queries: [RouteQuery], answers: [RouteLookupResult?])?

    /// When every lookup is asked again because an IPv4 route's removal may
    /// have given an answer: kept through every evaluation until one asks
    /// everything at or after it.
    private var removalRecheck = RemovalRecheck()

    /// Route lookups asked for the status (the families' and the name
    /// servers'), since the start: what a test counts where a timing
    /// would be noise.
    package private(set) var routeLookupsAsked = 0

    /// Interfaces whose metering the configuration says (`[metered]`), by name.
    /// Set before ``start()``; set later, the next evaluation lists the
    /// links again, whatever moved.
    package var meteredOverrides: [String: Bool] = [:] {
        didSet { lastLookups = nil }
    }
    /// Each link's guess, read from sysfs once per link (and name), never per
    /// route event.
    private var meteringGuesses: [Int: (name: String, guess: Metering)] = [:]

    /// The name servers the resolver asks (``ResolverConfiguration``): each
    /// judged by its route at every evaluation. Set with
    /// ``setResolverServers(_:)``.
    package private(set) var resolverServers: [NameServer] = []

    /// What a connectivity check found about the paths published so far (the
    /// daemon's checker, fed back through ``apply(_:)``); `nil` where no check
    /// runs, and connectivity is `.unknown`.
    package var connectivityFindings: ConnectivityFindings?

    /// Subscribes to notifications at once, so nothing is missed between now and
    /// ``start()``'s dump.
    package init(source: StatusSource, logger: Logger) throws(NetlinkError) {
        events = try NetlinkEventSocket()
        queries = try NetlinkQuerySocket()
        publisher = StatusPublisher(
            source: source, firstSeq: Self.firstSequenceNumber(),
            network: .current(socket: events.fileDescriptor))
        self.logger = logger
    }

    /// Where a watcher's `seq` starts: microseconds since boot (CLOCK_BOOTTIME,
    /// which never steps back and counts suspend). A restarted daemon starts
    /// above every number its predecessor published, because publishing costs
    /// far more than a microsecond (a netlink read and two route lookups), so
    /// no watcher can count faster than the clock. No state file is needed.
    package static func firstSequenceNumber() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
    }

    /// The descriptor to wait on for readability before calling ``handleReadable()``.
    package var fileDescriptor: Int32 { events.fileDescriptor }

    /// Hands every datagram received to `sink`: how test fixtures are recorded.
    package func traceDatagrams(_ sink: @escaping ([UInt8]) -> Void) {
        trace = sink
        events.trace = { sink(Array($0)) }
    }

    /// Takes the first snapshot and publishes the first status.
    package func start() throws(NetlinkError) -> NetworkStatus {
        // The publisher has published nothing yet, so this always publishes.
        try resynchronise()!
    }

    /// Reads one batch of notifications. Returns a status when the published
    /// state changed, `nil` when it did not.
    package func handleReadable() throws(NetlinkError) -> NetworkStatus? {
        let batch = try events.read(maxDatagrams: batchLimit)
        if batch.overran {
            resyncCount += 1
            logger.warning(
                "netlink receive queue overran (ENOBUFS); resynchronising from a fresh dump",
                metadata: ["netlink.resyncs": "\(resyncCount)"])
            try events.discardQueued()
            return try resynchronise(afterLoss: true)
        }
        for event in batch.events { table.apply(event) }
        let scope = LookupScope(batch.events)
        guard scope != .nothing else { return nil }
        movedForDestinations.formUnion(scope)
        // The kernel unlinks an IPv6 route before it tells of it.
        let removed = batch.events.compactMap { event -> RemovedRoute? in
            guard case .routeRemoved(let route?) = event, route.prefix.address.family == .ipv4 else { return nil }
            return route
        }
        removedForDestinations.formUnion(removed)
        return try evaluate(scope, removedIPv4: removed)
    }

    /// Replaces both sockets and resynchronises from a fresh dump, keeping the
    /// sequence of published statuses: what to do when a socket fails in a way
    /// other than an overrun. The descriptor to wait on changes.
    package func reopen() throws(NetlinkError) -> NetworkStatus? {
        events = try NetlinkEventSocket()
        queries = try NetlinkQuerySocket()
        if let trace { traceDatagrams(trace) }
        return try resynchronise(afterLoss: true)
    }

    /// Takes in the resolver's servers (its configuration changed, or before
    /// ``start()``): the status to publish when their verdict changed it.
    package func setResolverServers(_ servers: [NameServer]) throws(NetlinkError) -> NetworkStatus? {
        guard servers != resolverServers else { return nil }
        resolverServers = servers
        lastLookups = nil
        guard publisher.current != nil else { return nil }
        return try evaluate()
    }

    /// Takes in what the connectivity check found (a probe finished) and
    /// publishes again: the new status, or `nil` when nothing changed.
    package func apply(_ findings: ConnectivityFindings) -> NetworkStatus? {
        connectivityFindings = findings
        guard let current = publisher.current else { return nil }
        let (verdict, portalURL) = findings.connectivity(ipv4: current.ipv4, ipv6: current.ipv6)
        let dns = DNSEvaluator.evaluate(current.dns, namesFail: findings.namesFail(ipv4: current.ipv4, ipv6: current.ipv6))
        return publisher.publish(
            ipv4: current.ipv4, ipv6: current.ipv6, interfaces: current.interfaces,
            connectivity: verdict, portalURL: portalURL,
            connectivityReason: findings.reason(ipv4: current.ipv4, ipv6: current.ipv6), dns: dns, at: Date())
    }

    /// Takes in the answers for the destinations the daemon watches itself,
    /// which its full statuses carry: the status to publish, or `nil` when
    /// they are the answers it carries. `unsent`: the last status returned
    /// has not been published yet, and takes them under its own number.
    package func apply(watched answers: [DestinationStatus], unsent: Bool) -> NetworkStatus? {
        publisher.publish(watched: answers, unsent: unsent, at: Date())
    }

    /// Asks the lookups again once a route behind the published paths has
    /// expired: the new status when that changed it. A refreshed route just
    /// sets the next expiry; nothing is published.
    package func expireRoutes(now: ContinuousClock.Instant) throws(NetlinkError) -> NetworkStatus? {
        guard let due = routesExpire, now >= due else { return nil }
        do {
            return try evaluate(now: now)
        } catch {
            // Asked again in a second, not at every wake-up: a lookup that
            // keeps failing must not spin the loop. A removal's time still
            // to come stands.
            routesExpire = removalRecheck.bounding(now + RouteLookupResult.askAgainAfterFailure, after: now)
            throw error
        }
    }

    /// Judges destination addresses against the kernel's lookup and the
    /// interface table as they are now (``DestinationTracker``).
    func judge(_ queries: [RouteQuery]) throws(NetlinkError) -> [AddressVerdict] {
        let verdicts = try DestinationEvaluator.judge(queries, socket: self.queries, table: table)
        logLost(verdicts.count { $0.state == .unknown }, of: "watched addresses")
        return verdicts
    }

    /// Route answers the kernel dropped even in the smallest batches: each
    /// is published `unknown` and asked again a second later.
    private func logLost(_ count: Int, of what: String) {
        guard count > 0 else { return }
        logger.warning(
            "the kernel dropped route answers (its reply queue overran); those are unknown until asked again in a second",
            metadata: ["lookups.lost": "\(count)", "lookups.of": "\(what)"])
    }

    /// One status from one snapshot, without subscribing: what `reachd status`
    /// computes when no daemon answers.
    package static func snapshot(source: StatusSource) throws(NetlinkError) -> NetworkStatus {
        let queries = try NetlinkQuerySocket()
        let table = InterfaceTable(replaying: try queries.dumpInterfaces())
        // With the cookie, as the daemon's own status has it.
        var publisher = StatusPublisher(
            source: source, firstSeq: firstSequenceNumber(), network: .current(socket: queries.fileDescriptor))
        var findings: ConnectivityFindings?
        let servers = ResolverConfiguration.current().servers
        let lookups = try queries.lookupRoutes(questions(resolverServers: servers, table: table))
        try requireProbes(lookups)
        return evaluate(
            table, lookups: lookups, &publisher, findings: &findings, resolverServers: servers, interfaces: nil,
            metering: guessMetering(of:)
        )!
    }

    /// Replaces the table with a fresh dump of links and addresses and evaluates it.
    /// - Parameter afterLoss: notifications were lost (an overrun, a
    ///   failed socket), an IPv4 route's removal among them perhaps: the
    ///   lookups, and the watched destinations', are asked again
    ///   ``RemovalRecheck/settles`` later too.
    private func resynchronise(afterLoss: Bool = false) throws(NetlinkError) -> NetworkStatus? {
        // One time for the loss and the lookups after it: a dump that took
        // longer than ``RemovalRecheck/settles`` (a loaded machine) would
        // otherwise count as the second ask and end it, making the second
        // ask depend on the dump's speed.
        let now = ContinuousClock.now
        if afterLoss {
            removalRecheck.lost(at: now)
            removedForDestinations.insert(Self.anyIPv4Route)
        }
        table = InterfaceTable(replaying: try queries.dumpInterfaces())
        movedForDestinations = .everything
        return try evaluate(now: now)
    }

    /// Evaluates the table and the lookups `scope` can have moved; the
    /// others are the answers last asked. `nil` when the status is as
    /// published, and at once when a batch of routes moved no lookup.
    private func evaluate(
        _ scope: LookupScope = .everything, removedIPv4: [RemovedRoute] = [], now: ContinuousClock.Instant = .now
    ) throws(NetlinkError) -> NetworkStatus? {
        // Links come and go (a container host's veths, each with a new index):
        // keep guesses only for the links there are, or the cache would grow
        // for as long as the daemon runs. Pruned only when it outgrew them.
        if meteringGuesses.count > table.links.count {
            meteringGuesses = meteringGuesses.filter { table.links[$0.key] != nil }
        }
        // Where only routes moved, the last lookups stand but for those the
        // scope covers, and their questions with them: the servers and the
        // links they name are as they were (a new server, a link or the
        // metering evaluates everything, or forgets them). Taken now, so
        // that a failure below leaves none.
        let last = scope == .everything ? nil : lastLookups
        lastLookups = nil
        let questions = last?.queries ?? Self.questions(resolverServers: resolverServers, table: table)
        var lookups: [RouteLookupResult?]
        // The links as last published, where only routes moved: the same
        // array, which the comparisons after it find equal at once.
        var interfaces: [InterfaceStatus]?
        if let last {
            // An answer lost, or resting on a route that expires, is asked
            // again: its deadline counts from its own asking.
            lookups = last.answers
            let moved = questions.indices.filter {
                lookups[$0]?.lifetime != nil || lookups[$0] == nil || scope.covers(questions[$0].destination)
            }
            // Only routes changed (``LookupScope``), so the table is as it was too.
            guard !moved.isEmpty else {
                lastLookups = last
                return nil
            }
            for (position, answer) in zip(moved, try queries.lookupRoutes(moved.map { questions[$0] })) {
                lookups[position] = answer
            }
            routeLookupsAsked += moved.count
            interfaces = publisher.current?.interfaces
        } else {
            lookups = try queries.lookupRoutes(questions)
            routeLookupsAsked += questions.count
        }
        try Self.requireProbes(lookups)
        lastLookups = (questions, lookups)
        let status = Self.evaluate(
            table, lookups: lookups, &publisher, findings: &connectivityFindings, resolverServers: resolverServers,
            interfaces: interfaces
        ) { self.metering(of: $0) }
        // Everything is asked again shortly, once, where a removed route may
        // have given an answer; only asking everything settles it.
        removalRecheck.asked(
            zip(questions.lazy.map(\.destination), lookups), removed: removedIPv4, at: now, settled: last == nil)
        routesExpire = removalRecheck.bounding(RouteLookupResult.askAgain(lookups, from: now))
        logLost(lookups.count { $0 == nil }, of: "name servers")
        return status
    }

    /// A removal that may have given any IPv4 answer: what a loss of
    /// notifications may have hidden.
    package static let anyIPv4Route = RemovedRoute(prefix: RoutePrefix(address: IPAddress("0.0.0.0")!, length: 0)!, nextHop: nil)

    /// The configuration's word for `link`, else its guess (cached).
    private func metering(of link: LinkRecord) -> Metering {
        if let said = meteredOverrides[link.name] { return said ? .yes : .no }
        if let cached = meteringGuesses[link.index], cached.name == link.name { return cached.guess }
        let guess = Self.guessMetering(of: link)
        meteringGuesses[link.index] = (link.name, guess)
        return guess
    }

    private static func guessMetering(of link: LinkRecord) -> Metering {
        let facts = LinkFacts.read(interface: link.name)
        return MeteringGuess.guess(
            hardwareType: link.hardwareType, kind: link.kind, deviceType: facts.deviceType, driver: facts.driver)
    }

    /// The lookups a status rests on, asked in one pass: the families'
    /// probes, then each name server's (a route going under the resolver
    /// changes the verdict with the status). A scoped server is asked on
    /// its link, as glibc sends to it.
    private static func questions(resolverServers: [NameServer], table: InterfaceTable) -> [RouteQuery] {
        [RouteQuery(ReachabilityEvaluator.probeDestinations[.ipv4]!), RouteQuery(ReachabilityEvaluator.probeDestinations[.ipv6]!)]
            + resolverServers.map { RouteQuery($0.address, outputInterface: $0.linkIndex(in: table.links)) }
    }

    /// The probes are the first batch's first replies, queued before any
    /// that could overrun it: lost, the socket itself is failing.
    private static func requireProbes(_ lookups: [RouteLookupResult?]) throws(NetlinkError) {
        guard lookups[0] != nil, lookups[1] != nil else { throw NetlinkError("look up the route out", errno: ENOBUFS) }
    }

    /// The status to publish from the table and the answers to
    /// ``questions(resolverServers:table:)`` (the probes' found), `nil`
    /// when unchanged. `interfaces`: the links as listed already, where the
    /// table did not change; `nil` lists them from it.
    private static func evaluate(
        _ table: InterfaceTable, lookups: [RouteLookupResult?], _ publisher: inout StatusPublisher,
        findings: inout ConnectivityFindings?, resolverServers: [NameServer], interfaces: [InterfaceStatus]?,
        metering: (LinkRecord) -> Metering
    ) -> NetworkStatus? {
        let ipv4Lookup = lookups[0]!, ipv6Lookup = lookups[1]!
        let servers = zip(resolverServers, lookups.dropFirst(2)).map { server, lookup in
            DestinationEvaluator.evaluate(server.address, lookup: lookup, table: table)
        }
        let ipv4 = ReachabilityEvaluator.evaluate(.ipv4, table: table, lookup: ipv4Lookup)
        let ipv6 = ReachabilityEvaluator.evaluate(.ipv6, table: table, lookup: ipv6Lookup)
        findings?.forget(pathsOtherThan: ipv4, ipv6)
        let dns = DNSEvaluator.evaluate(
            DNSEvaluator.evaluate(servers), namesFail: findings?.namesFail(ipv4: ipv4, ipv6: ipv6) ?? false)
        let (verdict, portalURL) = findings?.connectivity(ipv4: ipv4, ipv6: ipv6) ?? (.unknown, nil)
        let status = publisher.publish(
            ipv4: ipv4, ipv6: ipv6, interfaces: interfaces ?? ReachabilityEvaluator.interfaces(in: table, metering: metering),
            connectivity: verdict, portalURL: portalURL, connectivityReason: findings?.reason(ipv4: ipv4, ipv6: ipv6),
            dns: dns, at: Date())
        return status
    }
}
