/// The destinations being watched, each with the addresses its name resolved
/// to and the answer last published for it: the daemon's watches, or an
/// in-process monitor's. Watches of the same destination by the same uid share
/// one entry, and names shared by entries resolve once.
///
/// Routes are never stored: after each batch of netlink notifications the
/// owner calls ``evaluate(judge:)``, which asks the kernel's lookup again for
/// the addresses watched that the batch can have moved (``LookupScope``)
/// and reports only the entries whose answer changed.
/// Nothing here reads a clock or a socket; the owner passes `now` and the
/// lookup.
package final class DestinationTracker {
    private struct Entry {
        var holders: Int
        /// The answer last published, without an id.
        var status: DestinationStatus?
        /// When the first route its answer rests on expires.
        var routesExpire: ContinuousClock.Instant?
        /// When it is asked again because an IPv4 route's removal may have
        /// given its answer: kept until it is asked at or after then.
        var removalRecheck = RemovalRecheck()
    }

    private struct Name {
        /// Each user's holders: the resolver queues the name under each
        /// user who waits for it, and drops it from a user's queue when
        /// their last holder goes.
        var holders: [UInt32?: Int] = [:]
        /// The resolver's answer; `nil` while the first resolution runs.
        var answer: HostResolver.Answer?
        /// The users whose wait for the first answer timed out: each user
        /// waits ``resolutionTimeout`` from their own first request, in
        /// their own turn at the resolver, so that a user who asked first
        /// (from behind a queue of names that never resolve) cannot make
        /// the name `timeout` for one who asks later.
        var timedOut: Set<UInt32?> = []
    }

    /// A user's wait for a name's first answer.
    private struct Wait: Hashable {
        var host: String
        var user: UInt32?
    }

    /// How long a name may take before it is published `unresolved`
    /// (`timeout`); a later answer is still taken.
    package let resolutionTimeout: Duration
    private let resolver: HostResolver
    private let source: StatusSource
    private var entries: [DestinationKey: Entry] = [:]
    private var names: [String: Name] = [:]
    /// When each user's wait for a name still without an answer times out:
    /// only a first resolution does (a name with an answer keeps it until
    /// the next), and the event loop asks for the earliest on every
    /// wake-up, so these are kept apart from the many names that have one.
    private var firstAnswerDue: [Wait: ContinuousClock.Instant] = [:]
    private var seq: UInt64
    /// The earliest of the entries' route expiries: when to look up again,
    /// though no notification comes. `nil` while none expires.
    private var routesExpire: ContinuousClock.Instant?

    /// - Parameter resolver: the system's by default; tests give one whose
    ///   lookup they control.
    init(
        source: StatusSource, firstSeq: UInt64, resolutionTimeout: Duration = .seconds(5), resolver: HostResolver? = nil
    ) throws(SystemError) {
        self.source = source
        self.seq = firstSeq
        self.resolutionTimeout = resolutionTimeout
        if let resolver { self.resolver = resolver } else { self.resolver = try HostResolver() }
    }

    package convenience init(source: StatusSource, firstSeq: UInt64, resolutionTimeout: Duration = .seconds(5))
        throws(SystemError)
    {
        try self.init(source: source, firstSeq: firstSeq, resolutionTimeout: resolutionTimeout, resolver: nil)
    }

    /// Readable when resolutions finished: then call ``collectResolutions()``.
    package var resolverDescriptor: Int32 { resolver.wake.fileDescriptor }

    package var isEmpty: Bool { entries.isEmpty }
    package var count: Int { entries.count }

    /// Starts watching `key` (or adds a holder to it). A name without an
    /// answer yet is queued for its user's turn at the resolver, and that
    /// user waits for it from now.
    package func add(_ key: DestinationKey, now: ContinuousClock.Instant) {
        entries[key, default: Entry(holders: 0)].holders += 1
        let host = key.destination.host
        guard key.destination.address == nil else { return }
        var name = names[host] ?? Name()
        if name.holders[key.uid] == nil, name.answer == nil {
            resolver.resolve(host, for: key.uid)
            firstAnswerDue[Wait(host: host, user: key.uid)] = now + resolutionTimeout
        }
        name.holders[key.uid, default: 0] += 1
        names[host] = name
    }

    /// Drops one holder of `key`; the last one forgets it, and its name when
    /// no other entry uses it. A user left holding none of a name no longer
    /// waits for it at the resolver.
    package func remove(_ key: DestinationKey) {
        guard var entry = entries[key] else { return }
        entry.holders -= 1
        entries[key] = entry.holders > 0 ? entry : nil
        // The last holder gone: its route's expiry must not wake the owner.
        if entry.holders == 0, entry.routesExpire != nil { routesExpire = Self.earliestExpiry(entries) }
        let host = key.destination.host
        guard key.destination.address == nil, var name = names[host] else { return }
        let left = name.holders[key.uid, default: 1] - 1
        name.holders[key.uid] = left > 0 ? left : nil
        if left <= 0 {
            resolver.cancel(host, for: key.uid)
            firstAnswerDue[Wait(host: host, user: key.uid)] = nil
            name.timedOut.remove(key.uid)
        }
        names[host] = name.holders.isEmpty ? nil : name
    }

    /// The answer last published for `key`, `nil` before its first evaluation.
    package func status(of key: DestinationKey) -> DestinationStatus? { entries[key]?.status }

    /// Whether `key`'s name still waits for its first answer (for tests:
    /// the published answer says `pending` too).
    package func isPending(_ key: DestinationKey) -> Bool {
        guard key.destination.address == nil, let name = names[key.destination.host] else { return false }
        return name.answer == nil && !name.timedOut.contains(key.uid)
    }

    /// Resolves every watched name again, keeping each one's answer until the
    /// new one comes: `/etc/resolv.conf` or `/etc/hosts` changed, or the path
    /// out did.
    package func resolveAgain() {
        for (host, name) in names {
            for user in name.holders.keys { resolver.resolve(host, for: user) }
        }
    }

    /// Takes in the resolutions that finished. Returns whether any answer
    /// changed, when the entries need evaluating.
    package func collectResolutions() -> Bool {
        var changed = false
        for (host, answer) in resolver.takeAnswers() {
            guard var name = names[host] else { continue }
            for user in name.holders.keys { firstAnswerDue[Wait(host: host, user: user)] = nil }
            // Only a name without an answer has users timed out, and any
            // answer is a change for it.
            name.timedOut = []
            if name.answer != answer {
                name.answer = answer
                changed = true
            }
            names[host] = name
        }
        return changed
    }

    /// When the oldest resolution under way times out, or the first route
    /// an answer rests on expires.
    package var nextDeadline: ContinuousClock.Instant? {
        Deadline.earliest(firstAnswerDue.values.min(), routesExpire)
    }

    /// What is due at `now`: a user whose name still has no answer after
    /// the timeout is answered `timeout`, and a route that expired must be
    /// looked up again. Returns whether the entries need evaluating.
    package func takeDue(now: ContinuousClock.Instant) -> Bool {
        let expired = firstAnswerDue.filter { now >= $0.value }.keys
        for wait in expired {
            firstAnswerDue[wait] = nil
            names[wait.host]?.timedOut.insert(wait.user)
        }
        return !expired.isEmpty || routesExpire.map { now >= $0 } ?? false
    }

    /// Asks the kernel's lookup, through `watcher`'s socket and against its
    /// interface table, about the addresses watched that `moved` holds, at
    /// `now`, and returns the entries whose answer changed, with the new
    /// answer stored.
    /// - Parameter keys: only these entries (one just added); `nil`: all.
    /// - Parameter removedIPv4: IPv4 routes removed since: an answer one of
    ///   them may have given is asked again shortly, as the status's are
    ///   (``RemovalRecheck``).
    func evaluate(
        with watcher: NetworkWatcher, only keys: [DestinationKey]? = nil, moved: LookupScope = .everything,
        removedIPv4: [RemovedRoute] = [], now: ContinuousClock.Instant
    ) throws(NetlinkError) -> [DestinationKey] {
        try evaluate(keys, moved: moved, removedIPv4: removedIPv4, now: now, judge: watcher.judge, answeredAt: { .now })
    }

    /// Asks `judge` about every address watched that `moved` holds, once
    /// per distinct address, uid and port: the pure core of
    /// ``evaluate(with:only:moved:removedIPv4:now:)``, which tests drive with recorded
    /// answers. An entry whose answer was lost, or rests on a route that
    /// expires, is asked whatever `moved` holds. A route's lifetime counts
    /// from `answeredAt()` (`now` without it), read once the lookups are
    /// answered: a thousand of them take longer than the margin a re-lookup
    /// is given.
    func evaluate(
        _ keys: [DestinationKey]? = nil, moved: LookupScope = .everything, removedIPv4: [RemovedRoute] = [],
        now: ContinuousClock.Instant,
        judge: ([RouteQuery]) throws(NetlinkError) -> [AddressVerdict],
        answeredAt: (() -> ContinuousClock.Instant)? = nil
    ) throws(NetlinkError) -> [DestinationKey] {
        var queries: [RouteQuery] = []
        var positions: [RouteQuery: Int] = [:]
        var plans: [(DestinationKey, Plan)] = []
        plans.reserveCapacity(entries.count)
        for key in keys ?? Array(entries.keys) {
            guard let entry = entries[key] else { continue }
            var plan = plan(for: key)
            if case .lookUp(let addresses, _) = plan {
                // Its answer stands: nothing read since can have moved it.
                if moved != .everything, entry.status != nil, entry.routesExpire == nil,
                    !addresses.contains(where: moved.covers)
                {
                    continue
                }
                let asked = addresses.map { address in
                    let query = RouteQuery(address, uid: key.uid, tcpPort: UInt16(key.destination.port))
                    if let position = positions[query] { return position }
                    positions[query] = queries.count
                    queries.append(query)
                    return queries.count - 1
                }
                plan = .lookUp(addresses, asked: asked)
            }
            plans.append((key, plan))
        }
        let verdicts: [AddressVerdict]
        do {
            verdicts = queries.isEmpty ? [] : try judge(queries)
        } catch {
            // An expiry that fell due is asked again in a second, not at
            // every wake-up: a lookup that keeps failing must not spin the loop.
            if let due = routesExpire, due <= now { routesExpire = now + RouteLookupResult.askAgainAfterFailure }
            throw error
        }
        let answered = queries.isEmpty ? now : answeredAt?() ?? now
        var changed: [DestinationKey] = []
        defer { routesExpire = Self.earliestExpiry(entries) }
        for (key, plan) in plans {
            let status: DestinationStatus
            switch plan {
            case .pending:
                status = Self.status(key.destination, state: .pending, reason: nil, verdicts: [], source: source)
            case .failed(let reason):
                status = Self.status(key.destination, state: .unresolved, reason: reason, verdicts: [], source: source)
            case .lookUp(_, let asked):
                status = Self.status(key.destination, verdicts: asked.map { verdicts[$0] }, source: source)
            }
            if case .lookUp(let addresses, let asked) = plan {
                let lookups = asked.map { verdicts[$0].lookup }
                var recheck = entries[key]?.removalRecheck ?? RemovalRecheck()
                recheck.asked(zip(addresses, lookups), removed: removedIPv4, at: now)
                entries[key]?.removalRecheck = recheck
                // A lost answer has no lookup: asked again in a second.
                entries[key]?.routesExpire = recheck.bounding(RouteLookupResult.askAgain(lookups, from: answered))
            } else {
                entries[key]?.removalRecheck = RemovalRecheck()
                entries[key]?.routesExpire = nil
            }
            if let old = entries[key]?.status, old.hasSameAnswer(as: status) { continue }
            seq += 1
            var stamped = status
            stamped.seq = seq
            entries[key]?.status = stamped
            changed.append(key)
        }
        return changed
    }

    private static func earliestExpiry(_ entries: [DestinationKey: Entry]) -> ContinuousClock.Instant? {
        entries.values.compactMap(\.routesExpire).min()
    }

    private enum Plan {
        case pending
        case failed(DestinationReason)
        /// The addresses, and once the queries are gathered, each one's position among them.
        case lookUp([IPAddress], asked: [Int])
    }

    private func plan(for key: DestinationKey) -> Plan {
        let addresses: [IPAddress]
        if let literal = key.destination.address {
            addresses = [literal]
        } else {
            let name = names[key.destination.host]
            switch name?.answer {
            case nil: return name?.timedOut.contains(key.uid) == true ? .failed(.timeout) : .pending
            case .failed(let reason): return .failed(reason)
            case .addresses(let resolved): addresses = resolved
            }
        }
        let wanted = key.family.map { family in addresses.filter { $0.family == family } } ?? addresses
        return wanted.isEmpty ? .failed(.noAddress) : .lookUp(wanted, asked: [])
    }

    /// The answer for a destination from its addresses' verdicts: reachable
    /// through the first reachable address; else unknown while an address's
    /// answer was lost; else unreachable for the first address's reason.
    static func status(
        _ destination: Destination, verdicts: [AddressVerdict], source: StatusSource
    ) -> DestinationStatus {
        let state: DestinationState =
            if verdicts.contains(where: { $0.state == .reachable }) { .reachable }
            else if verdicts.contains(where: { $0.state == .unknown }) { .unknown }
            else { .unreachable }
        return status(
            destination, state: state,
            reason: state == .unreachable ? verdicts.first?.reason.map(DestinationReason.route) : nil,
            verdicts: verdicts, source: source)
    }

    private static func status(
        _ destination: Destination, state: DestinationState, reason: DestinationReason?, verdicts: [AddressVerdict],
        source: StatusSource
    ) -> DestinationStatus {
        let addresses = verdicts.map { verdict in
            AddressReachability(
                address: verdict.address.description, family: verdict.address.family,
                state: verdict.state,
                reason: verdict.reason.map(DestinationReason.route), via: verdict.via.map(route))
        }
        return DestinationStatus(
            target: destination.description, host: destination.host, port: destination.port, state: state,
            reason: reason, via: addresses.first { $0.state == .reachable }?.via, addresses: addresses, seq: 0,
            source: source)
    }

    private static func route(_ path: DestinationPath) -> DestinationRoute {
        DestinationRoute(
            interface: path.interface, index: path.index, family: path.family, gateway: path.gateway?.description,
            table: path.table, source: path.source.description)
    }
}
