import Reachability

/// The daemon's clients: who is connected under which token, how many each
/// user holds, who subscribed to which form, and who waits for a turn or an
/// idle deadline. Every change costs O(1), and a wake-up walks no
/// subscriber: at 10,000 subscribers a wake-up for one request costs what one
/// request costs. It does walk the clients that have not subscribed, for
/// their idle deadlines; the idle limit keeps those few but for a connect
/// flood, which the client limits bound.
final class ClientTable {
    private var byToken: [UInt64: ClientConnection] = [:]
    private var perUser: [UInt32: Int] = [:]
    /// Subscribers of each form, contiguous for the fan-out; each client knows
    /// its slot, so leaving is a swap with the last.
    private var full: [ClientConnection] = []
    private var summary: [ClientConnection] = []
    /// Connected and not subscribed: the only clients with an idle deadline.
    private var unsubscribed: [UInt64: ClientConnection] = [:]
    /// Requests read and waiting their turn (the per-wake-up limit, or an
    /// answer that went out only now): served on the next pass without waiting.
    private var waiting: [UInt64: ClientConnection] = [:]
    private var nextToken: UInt64 = 1

    var count: Int { byToken.count }
    var hasWaiting: Bool { !waiting.isEmpty }
    var all: Dictionary<UInt64, ClientConnection>.Values { byToken.values }

    /// Why a new connection from `user` cannot be served, or `nil` when it can.
    func refusal(for user: UInt32, limits: ClientLimits) -> String? {
        limits.refusal(clients: count, userClients: perUser[user, default: 0], user: user)
    }

    /// A new connection, with a token never used before.
    func insert(fd: Int32, user: UInt32, ofThisNetwork: Bool, now: ContinuousClock.Instant) -> ClientConnection {
        let client = ClientConnection(fd: fd, user: user, ofThisNetwork: ofThisNetwork, token: nextToken, now: now)
        nextToken += 1
        byToken[client.token] = client
        unsubscribed[client.token] = client
        perUser[user, default: 0] += 1
        return client
    }

    /// The client with `token`, while it is connected.
    func client(_ token: UInt64) -> ClientConnection? { byToken[token] }

    /// Whether `client` is still connected (not dropped earlier in this pass).
    func contains(_ client: ClientConnection) -> Bool { byToken[client.token] === client }

    func remove(_ client: ClientConnection) {
        guard contains(client) else { return }
        byToken[client.token] = nil
        unsubscribed[client.token] = nil
        waiting[client.token] = nil
        if let slot = client.subscriberSlot { removeSubscriber(client, at: slot) }
        let left = perUser[client.user, default: 1] - 1
        perUser[client.user] = left > 0 ? left : nil
    }

    /// Takes `client` out of its form's list by moving the last one into its slot.
    private func removeSubscriber(_ client: ClientConnection, at slot: Int) {
        func remove(from list: inout [ClientConnection]) {
            let last = list.removeLast()
            guard slot < list.count else { return }
            list[slot] = last
            last.subscriberSlot = slot
        }
        switch client.detail {
        case .full: remove(from: &full)
        case .summary: remove(from: &summary)
        }
    }

    /// Makes `client` a subscriber of `detail`; a second subscribe changes the form.
    func subscribe(_ client: ClientConnection, _ detail: StatusDetail) {
        if let slot = client.subscriberSlot {
            guard client.detail != detail else { return }
            removeSubscriber(client, at: slot)
        }
        client.detail = detail
        unsubscribed[client.token] = nil
        switch detail {
        case .full:
            client.subscriberSlot = full.count
            full.append(client)
        case .summary:
            client.subscriberSlot = summary.count
            summary.append(client)
        }
    }

    func subscribers(_ detail: StatusDetail) -> [ClientConnection] {
        switch detail {
        case .full: full
        case .summary: summary
        }
    }

    /// Notes that `client` has requests to serve on the next pass, or not.
    func setWaiting(_ client: ClientConnection, _ isWaiting: Bool) {
        waiting[client.token] = isWaiting ? client : nil
    }

    /// The clients with requests waiting, taken off the list.
    func takeWaiting() -> [ClientConnection] {
        defer { waiting.removeAll(keepingCapacity: true) }
        return Array(waiting.values)
    }

    /// When the next unsubscribed client is due to be closed for idling.
    func nextIdleDeadline(after limit: Duration) -> ContinuousClock.Instant? {
        unsubscribed.values.lazy.compactMap { $0.idleDeadline(after: limit) }.min()
    }

    /// The unsubscribed clients idle past `limit` at `now`.
    func idle(at now: ContinuousClock.Instant, after limit: Duration) -> [ClientConnection] {
        unsubscribed.values.filter { client in client.idleDeadline(after: limit).map { now >= $0 } ?? false }
    }
}
