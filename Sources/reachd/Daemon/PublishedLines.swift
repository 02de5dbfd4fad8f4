import Reachability

/// The published status as lines for clients, each form encoded once per
/// change however many subscribers read it, and the full form only when
/// someone reads it: a host whose clients all follow the summary encodes no
/// interface lists.
///
/// The summary line changes only when the summary does: a container's veth
/// appearing gives a new full line and leaves the summary line, its `seq` and
/// `changed_at` included, as it was.
struct PublishedLines {
    private var status: NetworkStatus
    /// The full line, once encoded for this status.
    private var full: [UInt8]?
    private var summary: [UInt8]
    private var summaryStatus: NetworkStatus

    init(_ status: NetworkStatus) {
        self.status = status
        summaryStatus = status.summary()
        summary = DaemonMessage.status(summaryStatus).line()
    }

    mutating func line(_ detail: StatusDetail) -> [UInt8] {
        switch detail {
        case .full:
            if let full { return full }
            let line = DaemonMessage.status(status).line()
            full = line
            return line
        case .summary:
            return summary
        }
    }

    /// Takes a newly published status; returns whether the summary changed.
    mutating func update(_ status: NetworkStatus) -> Bool {
        self.status = status
        full = nil
        guard !status.hasSameSummary(as: summaryStatus) else { return false }
        summaryStatus = status.summary()
        summary = DaemonMessage.status(summaryStatus).line()
        return true
    }
}
