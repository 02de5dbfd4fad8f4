import Reachability

/// The published status as lines for clients, each form encoded once per
/// change however many subscribers read it, and the full form only when
/// someone reads it: a host whose clients all follow the summary encodes no
/// interface lists.
///
/// The summary line changes only when the summary does: a container's veth
/// appearing gives a new full line and leaves the summary line, its `seq` and
/// `changed_at` included, as it was.
///
/// Each form comes two ways: as news, with the status's ``NetworkStatus/changes``
/// (what subscribers are sent as it is published), and as a reader's first
/// status, with none (a `get`'s answer, the status a subscription starts
/// from): what changed before a reader came is no news to it.
struct PublishedLines {
    /// What every line says of the daemon's check: how long a `reachd
    /// check` may wait for its answer.
    private let check: DaemonCheck?
    private var status: NetworkStatus
    private var summaryStatus: NetworkStatus
    /// The lines encoded for this status so far.
    private var encoded: [Form: [UInt8]] = [:]
    /// The full form's interface list as last encoded: a route change
    /// leaves it, and its bytes, as they were.
    private var memo = StatusLineMemo()

    private struct Form: Hashable {
        var detail: StatusDetail
        var first: Bool
    }

    init(_ status: NetworkStatus, check: DaemonCheck? = nil) {
        self.check = check
        var status = status
        status.check = check
        self.status = status
        summaryStatus = status.summary()
    }

    /// How many full lines took their interface list's bytes from the last
    /// one: what a test counts.
    var interfaceListsReused: Int { memo.reuses }

    /// The status as news: the line every subscriber of `detail` is sent.
    mutating func line(_ detail: StatusDetail) -> [UInt8] {
        line(Form(detail: detail, first: false))
    }

    /// The status as a reader's first: no changes.
    mutating func first(_ detail: StatusDetail) -> [UInt8] {
        line(Form(detail: detail, first: true))
    }

    /// The status as news for a reader still to be sent an earlier one,
    /// which this replaces: it is told what that one said changed as well
    /// (``StatusChange/merging(_:_:)``). Encoded for that reader alone.
    func line(_ detail: StatusDetail, replacing missed: [StatusChange]) -> (line: [UInt8], changes: [StatusChange]) {
        var merged = form(detail)
        merged.changes = StatusChange.merging(missed, merged.changes)
        return (DaemonMessage.status(merged).line(), merged.changes)
    }

    /// What the news line of `detail` says changed.
    func changes(_ detail: StatusDetail) -> [StatusChange] {
        form(detail).changes
    }

    /// Takes a newly published status; returns whether the summary changed.
    mutating func update(_ status: NetworkStatus) -> Bool {
        var status = status
        status.check = check
        self.status = status
        let summaryChanged = !status.hasSameSummary(as: summaryStatus)
        if summaryChanged { summaryStatus = status.summary() }
        encoded = encoded.filter { $0.key.detail == .summary && !summaryChanged }
        return summaryChanged
    }

    private func form(_ detail: StatusDetail) -> NetworkStatus {
        switch detail {
        case .full: status
        case .summary: summaryStatus
        }
    }

    private mutating func line(_ form: Form) -> [UInt8] {
        if let line = encoded[form] { return line }
        let status = self.form(form.detail)
        let line = StatusLineWriter.line(form.first ? status.asFirst() : status, memo: &memo)
        encoded[form] = line
        return line
    }
}
