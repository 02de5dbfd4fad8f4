/// What one probe found: how it ended, whether the check host's name failed
/// to resolve (the server answered at the address kept from the last probe
/// that got an answer), and the address that answered, to keep.
struct ProbeReport: Equatable, Sendable {
    var outcome: ProbeOutcome
    /// The name did not resolve by its share of the deadline, and the server
    /// answered at the kept address: names fail while the path works.
    var nameFailed = false
    /// The address that answered, if any.
    var answeredAt: CheckServerAddress?

    init(_ outcome: ProbeOutcome, nameFailed: Bool = false, answeredAt: CheckServerAddress? = nil) {
        self.outcome = outcome
        self.nameFailed = nameFailed
        self.answeredAt = answeredAt
    }
}
