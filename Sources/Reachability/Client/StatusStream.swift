/// The status as a ``FollowSession`` delivers it, over every change of
/// source: which source is followed, the status delivered last, and the
/// number the next one carries. Pure: statuses in, what to deliver out.
///
/// Kept apart from the session's loop because it is where PROTOCOL.md's
/// promises to a reader are kept (no status twice, `changes` against what
/// was delivered, `seq` never backwards), and they hold without a socket.
struct StatusStream: Equatable {
    /// How much of each status is delivered; `nil`: none.
    let detail: StatusDetail?
    /// The status delivered last: one describing the same network from the
    /// same source (a resubscription renumbers them) is not delivered again.
    private var current: NetworkStatus?
    /// Where what is delivered comes from, as last said.
    private(set) var following: StatusSource?
    /// Added to the `seq` of the statuses followed now, so that `seq` never
    /// goes backwards on the session's stream, as PROTOCOL.md promises: each
    /// source numbers from its own start (a daemon that ran before this
    /// client numbers below what in-process did meanwhile), and a client
    /// that drops a lower `seq` as stale would drop every status after the
    /// daemon came back. Zero whenever the source's own numbers will do.
    private var seqOffset: UInt64 = 0

    init(detail: StatusDetail?) {
        self.detail = detail
    }

    /// A run starts: its first source is news, whatever the last run followed.
    mutating func restart() {
        following = nil
    }

    /// The source switched to `source`: news once, before anything from it.
    mutating func follow(_ source: StatusSource) -> FollowSession.Update? {
        guard following != source else { return nil }
        following = source
        return .following(source)
    }

    /// Whether a daemon's news may pass as it came, its bytes not even
    /// decoded first: a subscription that has answered publishes only
    /// changes, so it needs no comparing, unless it must be renumbered.
    func passesThrough(_ line: [UInt8]) -> Bool {
        guard seqOffset == 0, let detail, StatusLineLayout.isStatus(line) else { return false }
        return detail == .full || StatusLineLayout.isSummary(line)
    }

    /// A line that passed through (``passesThrough(_:)``) and nobody
    /// decoded: what was delivered last, decoded only when a later status
    /// is compared with it (``delivery(of:line:)``).
    private var passedUndecoded: StatusUpdate?

    /// A line that passed through (``passesThrough(_:)``), once decoded.
    mutating func passed(_ status: NetworkStatus) {
        current = status
        passedUndecoded = nil
    }

    /// A line that passed through, not decoded.
    mutating func passed(_ update: StatusUpdate) {
        passedUndecoded = update
    }

    /// What was delivered last, decoding it if it passed through undecoded.
    /// One that does not decode (a broken daemon's, printed as it came)
    /// leaves the status before it: the nearest known to what the reader saw.
    private mutating func decodePassed() {
        guard let update = passedUndecoded else { return }
        passedUndecoded = nil
        if let status = try? update.status() { current = status }
    }

    /// What to deliver of `status` (with the daemon's `line`, or `nil` when
    /// computed in-process), unless it describes what was delivered last.
    /// A daemon's status comes in the form asked for; an in-process one is
    /// reduced here.
    ///
    /// A status that starts a source's stream (a new subscription, the
    /// daemon back, in-process taking over) says no changes; where it
    /// differs from what was delivered, the reader was not told how, so its
    /// changes are worked out here, as the publisher would have: a
    /// handover while the daemon restarted is still one.
    mutating func delivery(of status: NetworkStatus, line: [UInt8]?) -> StatusUpdate? {
        guard let detail else { return nil }
        decodePassed()
        var reduced = line == nil ? status.detailed(detail) : status
        var line = line
        var changesRewritten = false
        if let current {
            if current.source == reduced.source, current.describesSameNetwork(as: reduced) { return nil }
            // A new source's status: its changes, if any, are against its
            // own past (an engine that ran for destinations), not what was
            // delivered.
            if reduced.changes.isEmpty || current.source != reduced.source {
                let changes = StatusDiff.changes(from: current, to: reduced)
                if changes != reduced.changes {
                    reduced.changes = changes
                    changesRewritten = true
                }
            }
        }
        let seq = numbered(reduced.seq)
        let renumbered = seq != reduced.seq
        reduced.seq = seq
        // A daemon's line is printed as it came: it must say what changed,
        // and carry the number delivered. A new number alone is spliced in,
        // keeping the keys a newer daemon added.
        if let received = line, changesRewritten || renumbered {
            line = changesRewritten ? nil : StatusLineLayout.line(received, renumberedTo: seq)
            if line == nil { line = Array(DaemonMessage.status(reduced).line().dropLast()) }
        }
        current = reduced
        return StatusUpdate(reduced, line: line)
    }

    /// `seq` as delivered: above the last delivered, by ``seqOffset``, which
    /// goes back to zero as soon as the source's own number is higher.
    private mutating func numbered(_ seq: UInt64) -> UInt64 {
        guard let last = current?.seq else { return seq }
        if seq > last {
            seqOffset = 0
        } else if seq &+ seqOffset <= last {
            seqOffset = last + 1 - seq
        }
        return seq &+ seqOffset
    }
}
