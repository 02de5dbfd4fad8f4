import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's event loop, on one thread: netlink → watcher → published
/// lines → subscribers, with requests answered from the published lines.
/// The loop routes each event to the service that owns its descriptor
/// (``DaemonEventToken``) and owns the status; each client's request goes
/// to what answers it (``RequestRouter``). The services: the engine's
/// descriptors (``EngineService``), the clients (``ClientService``), with
/// the status they are sent (``StatusFanOut``) and their destinations
/// (``DestinationService``), the connectivity check (``ConnectivityService``),
/// the host's closed connections (``PassiveWatchService``), the metrics
/// (``MetricsService``) and what operators and systemd are told
/// (``StatusAnnouncer``). Nothing in it has a timeout unless systemd's
/// watchdog, an idle client or a due probe asks for one: an idle daemon
/// sleeps in one `epoll_wait`. The watchdog's pings come from this loop, so a
/// hung loop is caught.
///
/// Written by hand on epoll: SwiftNIO cannot register a netlink descriptor,
/// and a single thread keeps every piece of state lock-free.
final class DaemonServer {
    /// What the process gives the daemon, beside its settings.
    struct Environment {
        /// The socket's path: the one to bind, or the one systemd bound.
        var socketPath: String
        var passed = SocketActivation()
        /// The client limits, derived from the open-file limit.
        var limits: ClientLimits
        var stop: WakeSignal
        var systemd = SystemdNotifier()
        /// When stderr is the journal.
        var journal: JournalWriter?
        var logger: Logger
    }

    /// The status, and the destinations watched on the same netlink sockets.
    private let engine: NetworkEngine
    /// The engine's descriptors in the loop.
    private let engineService: EngineService
    private let clients: ClientService
    private let poll: EventPoll<DaemonEventToken>
    /// Held for the server's life: the signal handler writes to its pipe,
    /// which closes with it.
    private let stop: WakeSignal
    private let logger: Logger
    /// The published status, to subscribers and as answers.
    private let fanOut: StatusFanOut
    /// The clients' watched destinations.
    private let destinations: DestinationService
    private let connectivity: ConnectivityService?
    /// The host's closed connections; `nil` when turned off or refused.
    private let passive: PassiveWatchService?
    private let metrics: MetricsService
    private let announcer: StatusAnnouncer
    /// The targets the daemon watches itself ([watch] targets), as its own uid.
    private let watched: [DestinationKey]
    /// Answers the clients' requests (the client service holds it weakly).
    private let router: RequestRouter
    /// Every service with a deadline or descriptors of its own, in the
    /// order they end a pass and hear a published status (``run()`` serves
    /// their events in an order of its own).
    private let services: [DaemonService]

    /// Subscribes to netlink, takes the first snapshot, then listens (binding
    /// the socket's path, or adopting the socket systemd passed) and tells
    /// systemd it is ready: the first client is always answered from a
    /// consistent state.
    init(_ settings: DaemonSettings, _ environment: Environment) throws {
        let logger = environment.logger
        self.logger = logger
        stop = environment.stop
        announcer = StatusAnnouncer(systemd: environment.systemd, journal: environment.journal, logger: logger)
        engine = try NetworkEngine(source: .daemon, logger: logger)
        engine.watcher.meteredOverrides = settings.meteredOverrides
        connectivity = try settings.check.map { try ConnectivityService($0, logger: logger) }
        // With a check, connectivity is `none` or `unknown` until it finds more.
        if connectivity != nil { engine.watcher.connectivityFindings = ConnectivityFindings() }
        let engine = engine
        var first = try engine.start()
        let watched = settings.watchedTargets.map { DestinationKey($0, uid: nil, family: nil) }
        self.watched = watched
        // Held for the daemon's life, evaluated with every client's; the
        // first status already carries their answers (names still pending).
        _ = try engine.add(watched, now: .now)
        if let withWatched = engine.apply(watched: watched.compactMap(engine.tracker.status(of:)), unsent: true) {
            // Still the first: where everything starts, with no changes.
            first = withWatched.asFirst()
        }
        connectivity?.observe(first, .now)
        passive = PassiveWatchService(settings.passive, filtered: !settings.passiveUnfiltered, logger: logger)
        passive?.observe(first)
        let passed = environment.passed
        let listener = try passed.socket.map { ListeningSocket(passed: $0, path: environment.socketPath) }
            ?? ListeningSocket(path: environment.socketPath)
        let poll = try EventPoll<DaemonEventToken>()
        self.poll = poll
        try poll.add(stop.fileDescriptor, .stop, interest: .readable)
        let limits = environment.limits
        let clients = try ClientService(listener: listener, limits: limits, network: first.network, poll: poll, logger: logger)
        self.clients = clients
        fanOut = StatusFanOut(first, check: connectivity?.announced, clients: clients)
        try connectivity?.register(in: poll)
        try passive?.register(in: poll)
        // Every descriptor there is, the resolver files' watch included.
        engineService = try EngineService(engine, poll: poll, logger: logger)
        destinations = DestinationService(limits: settings.destinationLimits, engine: engine, clients: clients, logger: logger)
        metrics = MetricsService(settings.metrics, passed: passed.metrics, watching: settings.watchedTargets, logger: logger)
        metrics.observe(first)
        let (metricsListen, metricsTextfile) = metrics.description
        logger.info("listening", metadata: [
            "socket.path": "\(environment.socketPath)", "socket.activated": "\(passed.socket != nil)",
            "clients.max": "\(limits.maxClients)", "clients.max_per_user": "\(limits.maxClientsPerUser)",
            "clients.idle_timeout": "\(limits.idleTimeout)",
            "check.url": "\(settings.check?.url ?? "off")",
            "check.passive": "\(passive != nil ? "on" : "off")",
            "metrics.listen": "\(metricsListen)",
            "metrics.textfile": "\(metricsTextfile)",
            "watch.targets": "\(settings.watchedTargets.map(\.description).joined(separator: " "))",
        ])
        // The announcer last: each status's log line and journal entry cost
        // about 0.1 ms, which nothing else should wait for.
        router = RequestRouter(
            clients: clients, fanOut: fanOut, destinations: destinations, connectivity: connectivity,
            engine: engineService, metrics: metrics)
        services = ([engineService, passive, connectivity, clients, metrics, announcer] as [DaemonService?]).compactMap { $0 }
        clients.handler = router
        endPass(.now)
        metrics.writeTextfile(exposition)
        announcer.ready(first, poll: poll)
    }

    /// Serves until the stop signal fires, then closes every client and removes
    /// the socket.
    func run() throws {
        defer { shutDown() }
        while true {
            let idleDeadline = clients.idleDeadline
            // Requests already read and waiting their turn need no wait.
            let wake = clients.hasWaiting
                ? .now
                : services.reduce(nil) { Deadline.earliest($0, $1.nextDeadline) }
            let wakeUp = DaemonWakeUp(try poll.wait(until: wake))
            if wakeUp.stop { return }
            let now = ContinuousClock.now
            announcer.pingWatchdogIfDue(now)
            // The daemon's own descriptors first: a change reaches every
            // subscriber before any client's request is read.
            var changed = try engineService.handle(wakeUp.engine, now)
            if wakeUp.journalWritable { announcer.journalWritable(poll: poll) }
            // The host's connections may ask for a probe, started below.
            passive?.serve(readable: wakeUp.connectionsClosed, connectivity: connectivity, now)
            // What the probes found goes back to the engine as an input.
            if let findings = connectivity?.collectFindings(
                probesFinished: wakeUp.probesFinished, neighboursChanged: wakeUp.neighboursChanged, now)
            {
                changed = engine.apply(findings) ?? changed
            }
            connectivity?.serveBus(ready: wakeUp.busReady, now)
            // A route behind the status that expired: the kernel says nothing.
            changed = engineService.expireRoutes(now) ?? changed
            // Once per wake-up, whatever asked for it: each evaluation is a
            // route lookup per watched address.
            let answers = destinations.evaluateChanged(now)
            // One status per pass, the newest (each holds the whole state),
            // carrying the watched targets' answers its change moved: never
            // one that says the route went and the target is still reachable.
            if let status = observeWatched(unsent: changed != nil) ?? changed { publish(status) }
            // The host's change first, then the clients' destinations.
            destinations.send(answers, now)
            passive?.awaitAnswers(connectivity?.awaitsAnswers ?? false)
            for (client, detail) in connectivity?.startProbesAndTakeDueWaiters(now) ?? [] where clients.contains(client) {
                fanOut.deliverStatus(detail, to: client, now)
                clients.settle(client)
            }
            let waiting = clients.takeWaiting()
            for (serial, event) in wakeUp.clients { clients.handle(serial, event, now) }
            clients.serve(waiting: waiting, now)
            clients.closeIdle(due: idleDeadline, now)
            // Scrapers after clients: Prometheus waits, subscribers don't.
            // The listener last: a scraper accepted in an earlier pass is
            // read before a newcomer can take its slot.
            for (token, event) in wakeUp.scrapers { metrics.handle(token, event, poll: poll, now, exposition: exposition) }
            if let listener = wakeUp.metricsListener {
                metrics.handle(.listener, listener, poll: poll, now, exposition: exposition)
            }
            metrics.expireScrapers(now)
            // Last: new connections wait behind the clients already served.
            if wakeUp.acceptReady { clients.acceptWaiting(now) }
            endPass(now)
        }
    }

    /// The status to publish when the watched targets' answers changed.
    /// `unsent`: this pass made a status that is not published yet, which
    /// takes them under its own number.
    private func observeWatched(unsent: Bool) -> NetworkStatus? {
        guard !watched.isEmpty else { return nil }
        return engine.apply(watched: watched.compactMap(engine.tracker.status(of:)), unsent: unsent)
    }

    private func exposition() -> [UInt8] {
        metrics.exposition(
            subscribers: clients.subscriberCount,
            counts: .init(
                refused: clients.refusedCount + metrics.refusedCount, resyncs: engine.watcher.resyncCount,
                journalDropped: announcer.journalDropped, connectionsFailed: passive?.counts.failed ?? [:],
                stalls: passive?.counts.stalls ?? [:]))
    }

    /// Once per pass, after whatever could bind, pause or resume a listener.
    private func endPass(_ now: ContinuousClock.Instant) {
        for service in services { service.endPass(now, poll: poll) }
    }

    /// Publishes a new status: to the subscribers before anything else
    /// (``StatusFanOut``), then to every service, the announcer (the log,
    /// the journal) last.
    private func publish(_ status: NetworkStatus) {
        let now = ContinuousClock.now
        let written = fanOut.publish(status, now)
        // The kernel wakes a subscriber on this core (wake-affine), where it
        // would wait for all that follows (log, journal, metrics): on two
        // cores that wait was most of the hop (perf sched: 135-159 µs from
        // the write to the subscriber's own, 58-61 µs with the core given
        // up here; bench/latency.py). Once per status, never while quiet.
        if written { sched_yield() }
        for service in services { service.observe(status, now, poll: poll) }
        metrics.writeTextfile(exposition)
    }

    private func shutDown() {
        announcer.stopping()
        clients.closeAll()
        metrics.stop()
        logger.info("stopped", metadata: ["socket.path": "\(clients.socketPath)"])
        announcer.stopped()
    }
}
