import Reachability

/// The clients' destination requests over the engine's
/// ``DestinationTracker``: which client watches what under which id, the
/// limits, and the `reach` requests waiting for a name to resolve. The
/// daemon's loop calls it; it sends nothing itself, but says who gets which
/// line.
final class DestinationWatches {
    private let engine: NetworkEngine
    private var tracker: DestinationTracker { engine.tracker }
    private let limits: DestinationLimits
    /// Each client's watches by id.
    private var byClient: [UInt64: [String: DestinationKey]] = [:]
    /// Who watches each entry, under which id.
    private var holders: [DestinationKey: [(client: ClientConnection, id: String)]] = [:]
    /// `reach` requests whose name has not resolved yet.
    private var waiting: [DestinationKey: [(client: ClientConnection, id: String?)]] = [:]
    /// Each user's watches and `reach` requests still to answer: what
    /// they may have queued at the resolver.
    private var perUser: [UInt32: Int] = [:]
    private var watchCount = 0

    /// A line for a client.
    struct Delivery {
        var client: ClientConnection
        var line: [UInt8]
        var stream: ClientConnection.OutputStream
    }

    init(limits: DestinationLimits, engine: NetworkEngine) {
        self.limits = limits
        self.engine = engine
    }

    /// Watches and `reach` answers to come, in all.
    var count: Int { tracker.count }

    /// Serves `reach`, `watch` or `unwatch` from `client`. Returns the lines
    /// to send: the answer to the request, and the new answer to every other
    /// watcher of an entry that the evaluation changed.
    func serve(_ request: ClientRequest, from client: ClientConnection, now: ContinuousClock.Instant) throws -> [Delivery] {
        switch request.operation {
        case .get, .subscribe, .check:
            return []
        case .unwatch:
            guard let id = request.id, let key = byClient[client.token]?[id] else {
                return [refusal(to: client, code: RequestError.unknownID, id: request.id,
                                "no watch \"\(request.id?.escapingControlCharacters ?? "")\" on this connection; "
                                    + "unwatch takes the id a watch was given")]
            }
            removeWatch(id, key, of: client)
            client.discardQueued(.watch(id))
            return []
        case .reach, .watch:
            // The parser guarantees a destination for these.
            guard let destination = request.destination else { return [] }
            // A sandbox with only loopback (PrivateNetwork=yes) would
            // otherwise resolve names through the host's resolver, a way
            // out, and learn of routes it has none of.
            guard client.ofThisNetwork else {
                return [refusal(
                    to: client, code: RequestError.otherNetwork, id: request.id,
                    "this connection comes from another network namespace than the daemon's, whose routes and "
                        + "name servers are not its own; ask in that namespace (reachd reach --no-daemon there)")]
            }
            let key = DestinationKey(destination, uid: client.user, family: request.family)
            if let reason = limits.refusal(
                connectionCount: client.destinationRequests, userCount: perUser[client.user, default: 0],
                totalCount: watchCount)
            {
                return [refusal(to: client, code: RequestError.tooManyWatches, id: request.id, reason)]
            }
            // The parser guarantees an id for `watch`.
            if request.operation == .watch, let id = request.id {
                guard byClient[client.token]?[id] == nil else {
                    return [refusal(to: client, code: RequestError.duplicateID, id: id,
                                    "this connection already has a watch \"\(id.escapingControlCharacters)\"; "
                                        + "choose another id, or unwatch it first")]
                }
                addWatch(id, key, of: client)
            } else {
                client.destinationRequests += 1
                perUser[client.user, default: 0] += 1
                waiting[key, default: []].append((client, request.id))
            }
            // Held before it is evaluated: a failed lookup leaves it held,
            // and the next evaluation answers it.
            let changed = try !engine.add([key], now: now).isEmpty
            return answer(key, changed: changed, for: client, id: request.operation == .watch ? request.id : nil)
        }
    }

    /// Evaluates every entry whose answer may have changed (once per
    /// wake-up: see ``NetworkEngine/evaluateDestinations(now:)``) and returns
    /// the lines for the answers that changed and the `reach` requests now
    /// answered; `nil` when nothing was looked up.
    func evaluateChanged(now: ContinuousClock.Instant) throws -> [Delivery]? {
        try engine.evaluateDestinations(now: now).map(deliveries(for:))
    }

    /// The entry `client` just asked about, just evaluated: the new answer
    /// to every holder when it `changed`, else the current answer to
    /// `client` alone.
    private func answer(
        _ key: DestinationKey, changed: Bool, for client: ClientConnection, id: String?
    ) -> [Delivery] {
        if changed { return deliveries(for: [key]) }
        guard let status = tracker.status(of: key) else { return [] }
        // A watch was just added under `id`; without one, a `reach` waits.
        if let id { return [line(status, id: id, to: client)] }
        return answerWaiting(key, status)
    }

    private func deliveries(for changed: [DestinationKey]) -> [Delivery] {
        var deliveries: [Delivery] = []
        for key in changed {
            guard let status = tracker.status(of: key) else { continue }
            for holder in holders[key] ?? [] {
                deliveries.append(line(status, id: holder.id, to: holder.client))
            }
            deliveries += answerWaiting(key, status)
        }
        return deliveries
    }

    /// Answers the `reach` requests for `key` once its name has resolved
    /// and its route answer is known (a lost one is asked again within a
    /// second: an `unknown` would be a one-shot answer no one asks again).
    private func answerWaiting(_ key: DestinationKey, _ status: DestinationStatus) -> [Delivery] {
        guard status.state.isSettled, let requests = waiting.removeValue(forKey: key) else { return [] }
        var deliveries: [Delivery] = []
        for request in requests {
            tracker.remove(key)
            request.client.destinationRequests -= 1
            release(request.client.user)
            var answer = status
            answer.id = request.id
            deliveries.append(Delivery(client: request.client, line: DaemonMessage.destination(answer).line(), stream: .answer))
        }
        return deliveries
    }

    private func line(_ status: DestinationStatus, id: String, to client: ClientConnection) -> Delivery {
        var tagged = status
        tagged.id = id
        return Delivery(client: client, line: DaemonMessage.destination(tagged).line(), stream: .watch(id))
    }

    private func refusal(to client: ClientConnection, code: String, id: String?, _ message: String) -> Delivery {
        Delivery(client: client, line: DaemonMessage.error(code: code, message: message, id: id).line(), stream: .answer)
    }

    private func addWatch(_ id: String, _ key: DestinationKey, of client: ClientConnection) {
        byClient[client.token, default: [:]][id] = key
        holders[key, default: []].append((client, id))
        perUser[client.user, default: 0] += 1
        watchCount += 1
        client.destinationRequests += 1
    }

    private func release(_ user: UInt32) {
        let left = perUser[user, default: 1] - 1
        perUser[user] = left > 0 ? left : nil
    }

    private func removeWatch(_ id: String, _ key: DestinationKey, of client: ClientConnection) {
        tracker.remove(key)
        byClient[client.token]?[id] = nil
        if byClient[client.token]?.isEmpty == true { byClient[client.token] = nil }
        holders[key]?.removeAll { $0.client === client && $0.id == id }
        if holders[key]?.isEmpty == true { holders[key] = nil }
        release(client.user)
        watchCount -= 1
        client.destinationRequests -= 1
    }

    /// Forgets everything `client` asked: it is gone.
    func remove(_ client: ClientConnection) {
        guard client.destinationRequests > 0 else { return }
        for (id, key) in byClient[client.token] ?? [:] { removeWatch(id, key, of: client) }
        for (key, requests) in waiting {
            let kept = requests.filter { $0.client !== client }
            for _ in kept.count..<requests.count {
                tracker.remove(key)
                release(client.user)
            }
            waiting[key] = kept.isEmpty ? nil : kept
        }
        client.destinationRequests = 0
    }
}
