import Logging
import Reachability

/// The metrics, as a service of the daemon's loop: what Prometheus is told
/// (``DaemonMetrics``), the two ways it is told (the HTTP listener and its
/// scrapers, node_exporter's textfile), and their descriptors in the event
/// poll.
///
/// A side job (principle 8): a listener that can't bind retries on its
/// backoff, a textfile that can't be written is logged once until its error
/// changes, and neither stops the socket serving. Scrapers are served after
/// clients: Prometheus waits, subscribers don't.
final class MetricsService {
    /// Its descriptors in the event poll.
    enum Token: Equatable {
        case listener
        case scraper(UInt64)
    }

    private let metrics: DaemonMetrics
    private let listener: MetricsListener?
    /// The listener is the one systemd bound (reachd-metrics.socket).
    private let passed: Bool
    private let textfile: MetricsTextfile?
    /// The textfile's last failure, logged once until it changes.
    private var textfileError: MetricsTextfile.Failure?
    /// The listener is in the event poll (once it is bound), and waited on
    /// (not while it is paused, out of descriptors).
    private var registered = false
    private var waited = false
    private let logger: Logger

    /// - Parameter passed: the listener systemd bound (reachd-metrics.socket),
    ///   which wins over `settings.listen`: no user could take it first.
    init(_ settings: MetricsSettings, passed: Int32?, watching: [Destination], logger: Logger) {
        self.logger = logger
        metrics = DaemonMetrics(watching: watching)
        self.passed = passed != nil
        let origin = passed.map(MetricsListener.Origin.passed) ?? settings.listen.map(MetricsListener.Origin.address)
        listener = origin.map { MetricsListener($0, hosts: settings.hosts, logger: logger) }
        textfile = settings.textfile.map(MetricsTextfile.init)
    }

    /// Where it listens and writes, for the daemon's first log line.
    var description: (listen: String, textfile: String) {
        let listen = listener.map { "http://\($0.address)/metrics\(passed ? " (from systemd)" : "")" } ?? "off"
        return (listen, textfile?.path ?? "off")
    }

    /// Scrapers refused since the daemon started.
    var refusedCount: Int { listener?.refusedCount ?? 0 }

    /// A published status: what the gauges say.
    func observe(_ status: NetworkStatus) {
        metrics.observe(status)
    }

    /// The metrics as Prometheus' text, with the daemon's counts now.
    func exposition(subscribers: Int, counts: DaemonMetrics.Counts) -> [UInt8] {
        metrics.exposition(subscribers: subscribers, counts: counts)
    }

    /// A bind retry or a scraper's end.
    var nextDeadline: ContinuousClock.Instant? { listener?.nextDeadline }

    /// Replaces the textfile, when there is one, with `exposition`'s.
    func writeTextfile(_ exposition: () -> [UInt8]) {
        guard let textfile else { return }
        let error = textfile.write(exposition())
        if let error, error != textfileError {
            logger.error("cannot write the metrics' textfile; tried again at the next change",
                         metadata: ["error": "\(error)", "metrics.textfile": "\(textfile.path)"])
        }
        textfileError = error
    }

    /// Serves a scraper that is ready, or takes new ones: each is read or
    /// written once.
    func handle(
        _ token: Token, _ event: ReadinessEvent<DaemonEventToken>, poll: EventPoll<DaemonEventToken>,
        _ now: ContinuousClock.Instant, exposition: () -> [UInt8]
    ) {
        guard let listener else { return }
        switch token {
        case .listener:
            for scraper in listener.acceptWaiting(now: now) {
                do { try poll.add(scraper.fd, .metrics(.scraper(scraper.token)), interest: .readable) } catch {
                    listener.close(scraper)
                }
            }
        case .scraper(let serial):
            guard let scraper = listener.scrapers[serial] else { return }
            let wanted = scraper.wantsWrite
            let open = listener.serve(
                scraper, readable: event.readable || event.failed, writable: event.writable, exposition: exposition)
            if open, scraper.wantsWrite != wanted {
                try? poll.modify(scraper.fd, .metrics(.scraper(serial)), interest: scraper.wantsWrite ? .writable : .readable)
            }
        }
    }

    /// Closes the scrapers whose time is up (closing takes a descriptor out
    /// of the poll): before new clients are accepted, which the descriptors
    /// freed may serve.
    func expireScrapers(_ now: ContinuousClock.Instant) {
        guard let listener, let due = listener.nextDeadline, now >= due else { return }
        listener.expire(now: now)
    }

    /// Once per pass: binds the listener when that is due, and waits on it
    /// unless it is paused.
    func update(poll: EventPoll<DaemonEventToken>, _ now: ContinuousClock.Instant) {
        guard let listener else { return }
        listener.bindIfDue(now: now)
        guard let acceptor = listener.acceptor else { return }
        if !registered {
            do {
                try poll.add(acceptor.fd, .metrics(.listener), interest: [])
                registered = true
            } catch {
                logger.error("cannot wait for scrapers", metadata: ["error": "\(error)"])
                return
            }
        }
        if acceptor.pauseIsOver(at: now) { listener.resume() }
        do { try poll.follow(acceptor, as: .metrics(.listener), waited: &waited) } catch {
            logger.error("cannot wait for connections", metadata: ["error": "\(error)"])
        }
    }

    /// A descriptor freed: a listener paused for want of one goes on.
    func descriptorFreed() {
        listener?.resume()
    }

    /// The daemon stops: a stopped daemon knows nothing of the host, and no
    /// value beats a stale one.
    func stop() {
        listener?.close()
        textfile?.remove()
    }
}

extension MetricsService: DaemonService {
    func endPass(_ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) { update(poll: poll, now) }

    func observe(_ status: NetworkStatus, _ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) {
        observe(status)
    }
}
