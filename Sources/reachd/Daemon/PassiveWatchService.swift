import Logging
import Reachability

/// The host's own connections as evidence about its paths, as a service of
/// the daemon's loop (``PassiveConnectionWatch``): a suspicion asks the
/// connectivity check for a probe, which decides; without a check it is
/// said in the log and counted, and `connectivity` stays `unknown`.
final class PassiveWatchService {
    private let watch: PassiveConnectionWatch
    private let logger: Logger
    /// When each family's suspicion was last logged at info level, where
    /// no check takes it up: a path that stays dead fills no log.
    private var logged: [AddressFamily: ContinuousClock.Instant] = [:]
    private static let logSpacing = Duration.seconds(60)

    /// `nil` when `threshold` is `nil` (`[connectivity] passive = no`), or
    /// when the kernel refuses the socket (said in the log).
    /// `filtered: false` (`--passive-unfiltered`, for the bench) reads
    /// every closed connection, as without the kernel's filter.
    init?(_ threshold: ConnectionEvidence.Threshold?, filtered: Bool = true, logger: Logger) {
        guard let threshold else { return nil }
        do {
            watch = try PassiveConnectionWatch(threshold, filtered: filtered)
        } catch {
            logger.warning("cannot watch the host's closed connections; a dead path is noticed by the check alone",
                           metadata: ["error": "\(error)"])
            return nil
        }
        self.logger = logger
    }

    func register(in poll: EventPoll<DaemonEventToken>) throws(SystemError) {
        try poll.add(watch.fileDescriptor, .connections, interest: .readable)
    }

    /// A published status: the paths connections are judged against.
    func observe(_ status: NetworkStatus) {
        watch.follow(status)
    }

    /// When a failure or a cached route leaves the evidence's window.
    var nextDeadline: ContinuousClock.Instant? { watch.nextDeadline }

    /// Failed connections on a published path and suspicions raised, per family.
    var counts: (failed: [AddressFamily: Int], stalls: [AddressFamily: Int]) { (watch.failedCount, watch.stallCount) }

    /// Once per pass: the evidence past its window is forgotten, and the
    /// connections that ended, when the socket is `readable`, go to the check.
    func serve(readable: Bool, connectivity: ConnectivityService?, _ now: ContinuousClock.Instant) {
        watch.forgetExpired(now)
        guard readable else { return }
        let news: [PassiveConnectionWatch.News]
        do { news = try watch.take(now) } catch {
            logger.warning("cannot read the host's closed connections", metadata: ["error": "\(error)"])
            return
        }
        for item in news {
            switch item {
            case .failing(let family):
                if let connectivity { connectivity.connectionsFail(family, now) } else { sayFailing(family, now) }
            case .answered(let family):
                connectivity?.connectionAnswered(family, now)
            }
        }
    }

    /// Lets answered connections through while the check awaits one.
    func awaitAnswers(_ wanted: Bool) {
        do { try watch.awaitAnswers(wanted) } catch {
            logger.warning("cannot filter the host's closed connections", metadata: ["error": "\(error)"])
        }
    }

    private func sayFailing(_ family: AddressFamily, _ now: ContinuousClock.Instant) {
        let loud = logged[family].map { now - $0 >= Self.logSpacing } ?? true
        if loud { logged[family] = now }
        logger.log(level: loud ? .info : .debug, "connections through this path fail; no connectivity check runs to confirm it",
                   metadata: ["path.family": "\(family)"])
    }
}

extension PassiveWatchService: DaemonService {
    /// Its socket is waited on for the daemon's life.
    func endPass(_ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) {}

    func observe(_ status: NetworkStatus, _ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) {
        observe(status)
    }
}
