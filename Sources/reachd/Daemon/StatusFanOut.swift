import Reachability

/// The published status and who gets it: each new status written to every
/// subscriber that wants it, and the status as an answer to `get`,
/// `subscribe` and `check`, from lines encoded once per change
/// (``PublishedLines``). Beside the clients' service, whose connections it
/// writes to.
final class StatusFanOut {
    private var published: PublishedLines
    private let clients: ClientService

    init(_ first: NetworkStatus, check: DaemonCheck?, clients: ClientService) {
        published = PublishedLines(first, check: check)
        self.clients = clients
    }

    /// Writes `status` to every subscriber that wants it, before anything
    /// else: each line is encoded once, and only when someone reads it; a
    /// subscriber still writing an older line only has it replaced.
    /// Whether any subscriber was written to.
    func publish(_ status: NetworkStatus, _ now: ContinuousClock.Instant) -> Bool {
        let summaryChanged = published.update(status)
        let full = clients.subscribers(.full)
        if !full.isEmpty { fanOut(.full, to: full, now) }
        let summaries = summaryChanged ? clients.subscribers(.summary) : []
        if !summaries.isEmpty { fanOut(.summary, to: summaries, now) }
        return !full.isEmpty || !summaries.isEmpty
    }

    /// The status as an answer (to `get`, `subscribe`, `check`).
    func deliverStatus(_ detail: StatusDetail, to client: ClientConnection, _ now: ContinuousClock.Instant) {
        let (line, kind) = statusLine(detail, for: client, asNews: false)
        clients.deliverStatus(line, kind, to: client, now)
    }

    private func fanOut(_ detail: StatusDetail, to subscribers: [ClientConnection], _ now: ContinuousClock.Instant) {
        // The one line most subscribers share, encoded once.
        let news = (published.line(detail), ClientConnection.StatusLine.news(published.changes(detail)))
        var broken: [ClientConnection] = []
        for client in subscribers {
            // One still writing an older line only has it replaced, without a
            // system call; it already waits to write.
            let waitedToWrite = client.hasPendingOutput
            let (line, kind) = client.queuedStatus == nil ? news : statusLine(detail, for: client, asNews: true)
            if !client.send(line, status: kind, now: now) {
                broken.append(client)
            } else if !waitedToWrite, client.hasPendingOutput {
                // Only now waits to write: the usual case costs no epoll_ctl.
                clients.updateInterest(of: client)
            }
        }
        // Dropped after the loop: dropping reorders the list being walked.
        for client in broken { clients.drop(client) }
    }

    /// The line of the current status for `client`: news for a subscriber
    /// as it is published (`asNews`), a reader's first for an answer. A line
    /// that replaces one still queued for it takes that one's place: after
    /// a first it is a first, after news it tells that news too, so that a
    /// handover in it is not lost.
    private func statusLine(_ detail: StatusDetail, for client: ClientConnection, asNews: Bool)
        -> (line: [UInt8], kind: ClientConnection.StatusLine)
    {
        switch client.queuedStatus {
        case .news(let missed):
            let merged = published.line(detail, replacing: missed)
            return (merged.line, .news(merged.changes))
        case .first:
            return (published.first(detail), .first)
        case nil:
            return asNews ? (published.line(detail), .news(published.changes(detail))) : (published.first(detail), .first)
        }
    }
}
