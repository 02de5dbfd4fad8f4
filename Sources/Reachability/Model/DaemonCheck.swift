#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The connectivity check a daemon runs, as its statuses announce it: what
/// it asks, and how soon it answers a `check` request. A client waits that
/// long (and a second more) for the check's answer, and no longer for a
/// daemon that answers nothing at all.
///
/// ```swift
/// let status = try await ReachabilityMonitor.currentStatus(source: .daemon)
/// if let check = status.check {
///     print("the daemon checks \(check.url), answering within \(check.answerWithin)")
/// }
/// ```
public struct DaemonCheck: Codable, Sendable, Equatable {
    /// The plain-HTTP URL it asks.
    public var url: String
    /// How soon a `check` request is answered at the latest: the wait for
    /// a probe (the daemon probes at most once per 5 s on request) and the
    /// check's timeout.
    public var answerWithin: Duration

    /// A check of `url`, answered within `answerWithin`: what a daemon announces.
    public init(url: String, answerWithin: Duration) {
        self.url = url
        self.answerWithin = answerWithin
    }

    private enum CodingKeys: String, CodingKey {
        case url
        case answerWithin = "answer_within_ms"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        answerWithin = .milliseconds(try container.decode(UInt32.self, forKey: .answerWithin))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encode(milliseconds, forKey: .answerWithin)
    }

    /// ``answerWithin`` in whole milliseconds, as the line carries it.
    package var milliseconds: Int64 {
        answerWithin.components.seconds * 1000 + answerWithin.components.attoseconds / 1_000_000_000_000_000
    }
}
