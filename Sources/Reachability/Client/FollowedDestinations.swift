/// The destinations a ``FollowSession`` follows: each one's id on the
/// daemon's connection, the answer delivered last, and whether the daemon
/// refused it. Pure: the session's loop asks it what to send and what to
/// deliver.
struct FollowedDestinations: Equatable {
    private struct Entry: Equatable {
        /// Its id on the daemon's connection: never used for another.
        let wireID: String
        let order: Int
        /// The answer delivered last.
        var delivered: DestinationStatus?
        /// The daemon refused to watch it: answered in-process from then on.
        var inProcessOnly = false
    }

    private var entries: [DestinationKey: Entry] = [:]
    private var keysByWireID: [String: DestinationKey] = [:]
    private var nextWireID = 0

    /// Starts following `key`: its new wire id, `nil` when it is followed already.
    mutating func add(_ key: DestinationKey) -> String? {
        guard entries[key] == nil else { return nil }
        let id = String(nextWireID)
        entries[key] = Entry(wireID: id, order: nextWireID)
        keysByWireID[id] = key
        nextWireID += 1
        return id
    }

    /// Stops following `key`: the id the daemon holds a watch under, `nil`
    /// when it holds none (never followed, or refused).
    mutating func remove(_ key: DestinationKey) -> (wireID: String, daemonHolds: Bool)? {
        guard let entry = entries.removeValue(forKey: key) else { return nil }
        keysByWireID[entry.wireID] = nil
        return (entry.wireID, !entry.inProcessOnly)
    }

    /// What a daemon's answer with this id is about; `nil` for one no
    /// longer followed.
    func key(wireID: String) -> DestinationKey? { keysByWireID[wireID] }

    /// Whether `wireID` was ever given: an answer about one unfollowed
    /// meanwhile is no protocol error.
    func wasIssued(_ wireID: String) -> Bool {
        guard let issued = Int(wireID) else { return false }
        return (0..<nextWireID).contains(issued)
    }

    /// The daemon refused `key`: in-process from now on.
    mutating func refusedByDaemon(_ key: DestinationKey) {
        entries[key]?.inProcessOnly = true
    }

    /// Whether any is answered in-process while the daemon answers the rest.
    var anyRefusedByDaemon: Bool { entries.values.contains(where: \.inProcessOnly) }

    /// The watches a new connection sends, in the order followed.
    var daemonWatches: [(key: DestinationKey, wireID: String)] {
        entries.filter { !$0.value.inProcessOnly }.sorted { $0.value.order < $1.value.order }
            .map { ($0.key, $0.value.wireID) }
    }

    /// What the in-process engine must hold: every destination while no
    /// daemon answers, only those it refused while one does.
    func inProcess(daemonAnswers: Bool) -> Set<DestinationKey> {
        Set(entries.filter { !daemonAnswers || $0.value.inProcessOnly }.keys)
    }

    /// `keys` in the order they were followed.
    func ordered(_ keys: some Sequence<DestinationKey>) -> [DestinationKey] {
        keys.filter { entries[$0] != nil }.sorted { entries[$0]!.order < entries[$1]!.order }
    }

    /// Whether `status` is news for `key`, taking it as delivered if so. A
    /// source says `pending` only before its first resolution of a name (a
    /// restarted daemon, the in-process engine taking over): the answer
    /// delivered stands until that source knows better.
    mutating func deliver(_ status: DestinationStatus, for key: DestinationKey) -> Bool {
        guard let entry = entries[key] else { return false }
        if let last = entry.delivered,
            status.state == .pending || (last.source == status.source && last.hasSameAnswer(as: status))
        {
            return false
        }
        entries[key]?.delivered = status
        return true
    }
}
