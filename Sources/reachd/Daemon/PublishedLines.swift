import Reachability

/// The published status as lines for clients, each form encoded once per
/// change however many subscribers read it.
///
/// The summary line changes only when the summary does: a container's veth
/// appearing gives a new full line and leaves the summary line, its `seq` and
/// `changed_at` included, as it was.
struct PublishedLines {
    private(set) var full: [UInt8]
    private(set) var summary: [UInt8]
    private var summaryStatus: NetworkStatus

    init(_ status: NetworkStatus) {
        full = DaemonMessage.status(status).line()
        summaryStatus = status.summary()
        summary = DaemonMessage.status(summaryStatus).line()
    }

    func line(_ detail: StatusDetail) -> [UInt8] {
        switch detail {
        case .full: full
        case .summary: summary
        }
    }

    /// Takes a newly published status; returns whether the summary changed.
    mutating func update(_ status: NetworkStatus) -> Bool {
        full = DaemonMessage.status(status).line()
        guard !status.hasSameSummary(as: summaryStatus) else { return false }
        summaryStatus = status.summary()
        summary = DaemonMessage.status(summaryStatus).line()
        return true
    }
}
