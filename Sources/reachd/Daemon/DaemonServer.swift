import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's event loop, on one thread: netlink → watcher → published
/// lines → subscribers, with requests answered from the published lines and
/// the connectivity checker fed what was published. Nothing in it has a
/// timeout unless systemd's watchdog, an idle client or a due probe asks for
/// one: an idle daemon sleeps in one `epoll_wait`. The watchdog's pings come
/// from this loop, so a hung loop is caught.
///
/// Written by hand on epoll: SwiftNIO cannot register a netlink descriptor,
/// and a single thread keeps every piece of state lock-free.
final class DaemonServer {
    /// What a descriptor in the event poll is: the daemon's own, the
    /// engine's, or a client's (``ClientTable/firstClientToken`` up).
    enum Token: EventToken, Equatable {
        case stop, listener, checker, metrics, journal
        case engine(NetworkEngine.Source)
        case client(UInt64)
        case scraper(UInt64)

        init?(eventData: UInt64) {
            switch eventData {
            case 0: self = .stop
            case 1: self = .listener
            case 2: self = .checker
            case 3: self = .engine(.netlink)
            case 4: self = .engine(.resolver)
            case 5: self = .engine(.resolverFiles)
            case 6: self = .metrics
            case 7: self = .journal
            case ClientTable.firstClientToken..<MetricsListener.firstToken: self = .client(eventData)
            case MetricsListener.firstToken...: self = .scraper(eventData)
            default: return nil
            }
        }

        var eventData: UInt64 {
            switch self {
            case .stop: 0
            case .listener: 1
            case .checker: 2
            case .engine(.netlink): 3
            case .engine(.resolver): 4
            case .engine(.resolverFiles): 5
            case .metrics: 6
            case .journal: 7
            case .client(let token), .scraper(let token): token
            }
        }
    }

    /// The status, and the destinations watched on the same netlink sockets.
    private let engine: NetworkEngine
    private var watcher: NetworkWatcher { engine.watcher }
    private let admission: ClientAdmission
    private let clients = ClientTable()
    private let poll: EventPoll<Token>
    private let stop: WakeSignal
    private let logger: Logger
    private let systemd: SystemdNotifier
    /// Where each change also goes as structured entries, when stderr is the journal.
    private let journal: JournalWriter?
    private let limits: ClientLimits
    /// The connectivity check, when configured.
    private let checker: ConnectivityChecker?
    /// Clients that asked for a check and wait for its answer.
    /// Each is answered when no probe is due, or at `answerBy` at the latest:
    /// what statuses announce (a path that changes meanwhile starts a check
    /// of its own, which it would otherwise wait for too).
    private var checkWaiters: [(client: ClientConnection, detail: StatusDetail, answerBy: ContinuousClock.Instant)] = []
    private var nextWatchdogPing: ContinuousClock.Instant?
    /// The published status, encoded once per change in each form.
    private var published: PublishedLines
    /// The first status was logged: the next ones are changes.
    private var announcedFirst = false
    /// The clients' watched destinations.
    private let destinations: DestinationWatches
    /// What Prometheus is told, and the two ways it is told.
    private let metrics: DaemonMetrics
    private let metricsListener: MetricsListener?
    private let metricsTextfile: MetricsTextfile?
    /// The textfile's last failure, logged once until it changes.
    private var textfileError: MetricsTextfile.Failure?
    /// The journal's socket in the event poll (by its connection, as a
    /// reconnection may reuse the number), and whether it is waited on:
    /// only while entries wait for room in journald's queue.
    private var journalRegistered: Int?
    private var journalWaited = false
    /// Whether the loop waits on each listener: not while it is paused.
    private var listenerWaited = true
    private var metricsWaited = false
    /// The metrics listener is in the event poll (once it is bound).
    private var metricsRegistered = false
    /// The targets the daemon watches itself ([watch] targets), as its own uid.
    private let watched: [DestinationTracker.Key]

    /// Subscribes to netlink, takes the first snapshot, then listens (binding
    /// `socketPath`, or adopting the socket systemd passed) and tells systemd
    /// it is ready: the first client is always answered from a consistent state.
    init(
        socketPath: String, passed: SocketActivation = SocketActivation(), limits: ClientLimits, check: ConnectivityCheck?,
        destinationLimits: DestinationLimits,
        meteredOverrides: [String: Bool], metrics metricsSettings: MetricsSettings = MetricsSettings(),
        watchedTargets: [Destination] = [], stop: WakeSignal, systemd: SystemdNotifier, journal: JournalWriter? = nil,
        logger: Logger
    ) throws {
        self.stop = stop
        self.journal = journal
        self.logger = logger
        self.systemd = systemd
        self.limits = limits
        engine = try NetworkEngine(source: .daemon, logger: logger)
        engine.watcher.meteredOverrides = meteredOverrides
        checker = try check.map { try ConnectivityChecker(check: $0, logger: logger) }
        // With a check, connectivity is `none` or `unknown` until it finds more.
        if checker != nil { engine.watcher.connectivityFindings = ConnectivityFindings() }
        let engine = engine
        var first = try engine.start()
        let watched = watchedTargets.map { DestinationTracker.Key($0, uid: nil, family: nil) }
        self.watched = watched
        // Held for the daemon's life, evaluated with every client's; the
        // first status already carries their answers (names still pending).
        _ = try engine.add(watched, now: .now)
        if let withWatched = engine.apply(watched: watched.compactMap(engine.tracker.status(of:)), unsent: true) {
            // Still the first: where everything starts, with no changes.
            first = withWatched.asFirst()
        }
        checker?.observe(first, now: .now)
        published = PublishedLines(first, check: checker.map { DaemonCheck(url: $0.check.url, answerWithin: $0.answerWithin) })
        let listener = try passed.socket.map { ListeningSocket(passed: $0, path: socketPath) }
            ?? ListeningSocket(path: socketPath)
        admission = ClientAdmission(listener: listener, limits: limits, logger: logger)
        poll = try EventPoll()
        try poll.add(stop.fileDescriptor, .stop, interest: .readable)
        try poll.add(listener.fd, .listener, interest: .readable)
        if let checker { try poll.add(checker.wake.fileDescriptor, .checker, interest: .readable) }
        // Every descriptor there is, the /etc watch a watched name made included.
        _ = engine.takeNewDescriptors()
        for (source, fd) in engine.descriptors { try poll.add(fd, .engine(source), interest: .readable) }
        destinations = DestinationWatches(limits: destinationLimits, engine: engine)
        metrics = DaemonMetrics(watching: watchedTargets)
        metrics.observe(first)
        // A socket systemd bound at boot wins: no user could take it first.
        let metricsOrigin = passed.metrics.map(MetricsListener.Origin.passed) ?? metricsSettings.listen.map(MetricsListener.Origin.address)
        metricsListener = metricsOrigin.map { MetricsListener($0, hosts: metricsSettings.hosts, logger: logger) }
        metricsTextfile = metricsSettings.textfile.map(MetricsTextfile.init)
        logger.info("listening", metadata: [
            "socket.path": "\(socketPath)", "socket.activated": "\(passed.socket != nil)",
            "clients.max": "\(limits.maxClients)", "clients.max_per_user": "\(limits.maxClientsPerUser)",
            "clients.idle_timeout": "\(limits.idleTimeout)",
            "check.url": "\(check?.url ?? "off")",
            "metrics.listen": "\(metricsListener.map { "http://\($0.address)/metrics\(passed.metrics != nil ? " (from systemd)" : "")" } ?? "off")",
            "metrics.textfile": "\(metricsSettings.textfile ?? "off")",
            "watch.targets": "\(watchedTargets.map(\.description).joined(separator: " "))",
        ])
        updateListeners(.now)
        writeTextfile()
        announce(first)
        systemd.ready(status: StatusFormatter.oneLine(first))
        nextWatchdogPing = systemd.watchdogInterval.map { .now + $0 }
    }

    /// Serves until the stop signal fires, then closes every client and removes
    /// the socket.
    func run() throws {
        defer { shutDown() }
        while true {
            let idleDeadline = clients.nextIdleDeadline(after: limits.idleTimeout)
            // Requests already read and waiting their turn need no wait.
            let wake = clients.hasWaiting
                ? .now
                : Deadline.earliest(
                    nextWatchdogPing, idleDeadline, checker?.nextDeadline, engine.nextDeadline, metricsListener?.nextDeadline,
                    admission.acceptor.pausedUntil, checkWaiters.lazy.map(\.answerBy).min())
            let events = try poll.wait(until: wake)
            let now = ContinuousClock.now
            pingWatchdogIfDue(now)
            // The daemon's own descriptors first: a change reaches every
            // subscriber before any client's request is read.
            var acceptReady = false
            var changed: NetworkStatus?
            for event in events {
                switch event.token {
                case .stop: return
                case .engine(let source): changed = try handle(source, now) ?? changed
                case .listener: acceptReady = true
                case .checker: changed = collectProbes(now) ?? changed
                case .journal:
                    journal?.flush()
                    waitOnJournal()
                case .client, .metrics, .scraper: break
                }
            }
            // A probe whose deadline passed counts as unanswered, whatever
            // its thread still waits on.
            if let checker, checker.expireOverdueProbes(now: now) {
                changed = engine.apply(checker.findings) ?? changed
            }
            // A route behind the status that expired: the kernel says nothing.
            changed = try expireRoutes(now) ?? changed
            // Once per wake-up, whatever asked for it: each evaluation is a
            // route lookup per watched address.
            let answers = evaluateDestinations(now)
            // One status per pass, the newest (each holds the whole state),
            // carrying the watched targets' answers its change moved: never
            // one that says the route went and the target is still reachable.
            if let status = observeWatched(unsent: changed != nil) ?? changed { publish(status) }
            // The host's change first, then the clients' destinations.
            send(answers, now)
            if let checker {
                // After netlink: a path that just changed is probed at once.
                checker.startDueProbes(now: now)
                if !checkWaiters.isEmpty { answerCheckWaiters(now, all: !checker.isBusy(now: now)) }
            }
            let waiting = clients.takeWaiting()
            for event in events {
                // Dropped earlier in this pass, or not a client's.
                guard case .client(let token) = event.token, let client = clients.client(token) else { continue }
                handle(event, from: client, now)
            }
            for client in waiting where clients.contains(client) { serve(client, now) }
            // Only when one is due: finding them walks every unsubscribed client.
            if let idleDeadline, now >= idleDeadline {
                for client in clients.idle(at: now, after: limits.idleTimeout) {
                    logger.debug("closing an idle client", metadata: ["client.user": "\(client.user)"])
                    drop(client)
                }
            }
            // Scrapers after clients: Prometheus waits, subscribers don't.
            if let metricsListener { serveScrapers(metricsListener, events, now) }
            // Last: new connections wait behind the clients already served.
            if acceptReady {
                for client in admission.acceptWaiting(into: clients, now) { register(client) }
            }
            updateListeners(now)
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
            subscribers: clients.subscribers(.full).count + clients.subscribers(.summary).count,
            counts: .init(
                refused: admission.refusedCount + (metricsListener?.refusedCount ?? 0), resyncs: watcher.resyncCount,
                journalDropped: journal?.dropped ?? 0))
    }

    /// Replaces the textfile, when there is one; a failure is logged once
    /// until it changes (the directory may come later, or never).
    private func writeTextfile() {
        guard let metricsTextfile else { return }
        let error = metricsTextfile.write(exposition())
        if let error, error != textfileError {
            logger.error("cannot write the metrics' textfile; tried again at the next change",
                         metadata: ["error": "\(error)", "metrics.textfile": "\(metricsTextfile.path)"])
        }
        textfileError = error
    }

    /// Serves the scrapers that are ready, takes new ones, and closes those
    /// whose time is up: each is read or written once.
    private func serveScrapers(_ listener: MetricsListener, _ events: [ReadinessEvent<Token>], _ now: ContinuousClock.Instant) {
        for event in events {
            switch event.token {
            case .metrics:
                for scraper in listener.acceptWaiting(now: now) {
                    do { try poll.add(scraper.fd, .scraper(scraper.token), interest: .readable) } catch {
                        listener.close(scraper)
                    }
                }
            case .scraper(let token):
                guard let scraper = listener.scrapers[token] else { continue }
                let wanted = scraper.wantsWrite
                let open = listener.serve(
                    scraper, readable: event.readable || event.failed, writable: event.writable, exposition: exposition)
                if open, scraper.wantsWrite != wanted {
                    try? poll.modify(scraper.fd, .scraper(token), interest: scraper.wantsWrite ? .writable : .readable)
                }
            case .stop, .listener, .checker, .engine, .client, .journal:
                continue
            }
        }
        // Closing a descriptor takes it out of the poll.
        if let due = listener.nextDeadline, now >= due { listener.expire(now: now) }
    }

    private func pingWatchdogIfDue(_ now: ContinuousClock.Instant) {
        guard let due = nextWatchdogPing, let interval = systemd.watchdogInterval, now >= due else {
            return
        }
        systemd.watchdog()
        nextWatchdogPing = now + interval
    }

    private func register(_ client: ClientConnection) {
        do {
            try poll.add(client.fd, .client(client.token), interest: client.registeredInterest)
        } catch {
            logger.warning("could not wait on a new client; closing it", metadata: ["error": "\(error)"])
            drop(client)
        }
    }

    private func handle(_ event: ReadinessEvent<Token>, from client: ClientConnection, _ now: ContinuousClock.Instant) {
        if event.failed {
            drop(client)
            return
        }
        if event.writable, !client.flush(now: now) {
            drop(client)
            return
        }
        if event.readable, !client.read(now: now) {
            drop(client)
            return
        }
        serve(client, now)
    }

    /// Answers up to ``ClientLimits/requestsPerWakeup`` queued requests, stopping
    /// early when an answer could not be written in full (backpressure).
    private func serve(_ client: ClientConnection, _ now: ContinuousClock.Instant) {
        var served = 0
        while served < limits.requestsPerWakeup, client.isReady, let request = client.nextRequest() {
            served += 1
            switch request {
            case .success(let request):
                switch request.operation {
                case .get:
                    deliverStatus(request.detail, to: client, now)
                case .subscribe:
                    clients.subscribe(client, request.detail)
                    deliverStatus(request.detail, to: client, now)
                case .check:
                    requestCheck(for: client, detail: request.detail, now)
                case .reach, .watch, .unwatch:
                    serveDestination(request, from: client, now)
                }
            case .failure(let error):
                logger.debug("rejected a client request", metadata: ["error": "\(error.message)"])
                if error.closesConnection {
                    if !client.close(with: error.line, now: now) { drop(client) }
                } else {
                    deliver(error.line, to: client, now, stream: .answer)
                }
            }
            guard clients.contains(client) else { return }
        }
        if client.isFinished {
            drop(client)
            return
        }
        clients.setWaiting(client, client.isReady)
        updateInterest(of: client)
    }

    /// Tells the event poll what `client` waits for now, when that changed.
    private func updateInterest(of client: ClientConnection) {
        let interest = client.interest
        guard interest != client.registeredInterest else { return }
        do {
            try poll.modify(client.fd, .client(client.token), interest: interest)
            client.registeredInterest = interest
        } catch {
            drop(client)
        }
    }

    /// Binds the metrics listener when that is due, and waits on each
    /// listener unless it is paused (out of descriptors, it would stay
    /// readable and spin the loop): once per pass, after whatever could
    /// bind, pause or resume one.
    private func updateListeners(_ now: ContinuousClock.Instant) {
        wait(on: admission.acceptor, .listener, now, waited: &listenerWaited)
        guard let metricsListener else { return }
        metricsListener.bindIfDue(now: now)
        guard let acceptor = metricsListener.acceptor else { return }
        if !metricsRegistered {
            do {
                try poll.add(acceptor.fd, .metrics, interest: [])
                metricsRegistered = true
            } catch {
                logger.error("cannot wait for scrapers", metadata: ["error": "\(error)"])
                return
            }
        }
        wait(on: acceptor, .metrics, now, waited: &metricsWaited)
    }

    /// Waits for room in journald's queue while entries wait for it, and
    /// not otherwise: a writable socket would wake the loop at once.
    private func waitOnJournal() {
        guard let journal, let fd = journal.fileDescriptor else { return }
        let wanted = journal.isBacklogged
        do {
            if journalRegistered != journal.connections {
                // The socket before it was closed, which took it out of the poll.
                try poll.add(fd, .journal, interest: wanted ? .writable : [])
                journalRegistered = journal.connections
            } else if wanted != journalWaited {
                try poll.modify(fd, .journal, interest: wanted ? .writable : [])
            }
            journalWaited = wanted
        } catch {
            logger.warning("cannot wait for room in the journal's queue; entries wait for the next change",
                           metadata: ["error": "\(error)"])
        }
    }

    private func wait(on acceptor: Acceptor, _ token: Token, _ now: ContinuousClock.Instant, waited: inout Bool) {
        if let until = acceptor.pausedUntil, now >= until { acceptor.resume() }
        guard acceptor.isPaused == waited else { return }
        do {
            try poll.modify(acceptor.fd, token, interest: acceptor.isPaused ? [] : .readable)
            waited = !acceptor.isPaused
        } catch {
            logger.error("cannot wait for connections", metadata: ["error": "\(error)"])
        }
    }

    /// Asks for the connectivity check for `client`, which is answered with
    /// the status once a probe that started after the request has answered
    /// (the checker spaces requested probes by
    /// ``ConnectivityChecker/requestInterval``, whoever asks). Without a
    /// check, or with no family online to probe, the answer is the status
    /// as it is.
    private func requestCheck(for client: ClientConnection, detail: StatusDetail, _ now: ContinuousClock.Instant) {
        guard let checker else {
            deliverStatus(detail, to: client, now)
            return
        }
        checker.requestCheck(now: now)
        checker.startDueProbes(now: now)
        guard checker.isBusy(now: now) else {
            deliverStatus(detail, to: client, now)
            return
        }
        client.awaitsCheck = true
        checkWaiters.append((client, detail, now + checker.answerWithin))
    }

    /// Answers every waiter (`all`: no probe is due), or those whose time is up.
    private func answerCheckWaiters(_ now: ContinuousClock.Instant, all: Bool) {
        let isDue = { (waiter: (client: ClientConnection, detail: StatusDetail, answerBy: ContinuousClock.Instant)) in
            all || waiter.answerBy <= now
        }
        let due = checkWaiters.filter(isDue)
        guard !due.isEmpty else { return }
        checkWaiters.removeAll(where: isDue)
        for (client, detail, _) in due where clients.contains(client) {
            client.awaitsCheck = false
            deliverStatus(detail, to: client, now)
            settle(client)
        }
    }

    /// After an answer that came later than its request: a client that has
    /// said all it will (`printf '{"op":"check"}' | socat ...`) and has been
    /// answered in full goes; any other waits for what is left to write.
    private func settle(_ client: ClientConnection) {
        guard clients.contains(client) else { return }
        if client.isFinished { drop(client) } else { updateInterest(of: client) }
    }

    /// Finished probes come back as an input to the watcher.
    /// The status to publish, when what the probes found changed it.
    private func collectProbes(_ now: ContinuousClock.Instant) -> NetworkStatus? {
        guard let checker, checker.collect(now: now) else { return nil }
        return engine.apply(checker.findings)
    }

    private func serveDestination(_ request: ClientRequest, from client: ClientConnection, _ now: ContinuousClock.Instant) {
        do {
            let deliveries = try destinations.serve(request, from: client, now: now)
            // Only the /etc watch comes from serving, and it does not throw.
            try? registerNewDescriptors()
            send(deliveries, now)
        } catch {
            logger.error("a route lookup for a destination failed", metadata: ["error": "\(error)"])
            let refusal = DaemonMessage.error(
                code: RequestError.lookupFailed, message: "the kernel's route lookup failed (\(error)); try again", id: request.id)
            let line = refusal.line()
            deliver(line, to: client, now, stream: .answer)
        }
    }

    /// The status, when a route it rests on expired and that changed it. A
    /// failed lookup is logged, and asked again at the next wake-up.
    private func expireRoutes(_ now: ContinuousClock.Instant) throws -> NetworkStatus? {
        do {
            return try engine.expireRoutes(now: now)
        } catch {
            logger.error("route lookups after a route expired failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Looks up the watched destinations again, when anything their answers
    /// rest on moved: the answers that changed, for their clients.
    private func evaluateDestinations(_ now: ContinuousClock.Instant) -> [DestinationWatches.Delivery] {
        do {
            // Timed only for the debug log: `make bench` reads the longest.
            let started = logger.logLevel <= .debug ? ContinuousClock.now : nil
            guard let deliveries = try destinations.evaluateChanged(now: now) else { return [] }
            if let started, destinations.count > 0 {
                let elapsed = ContinuousClock.now - started
                logger.debug("evaluated watched destinations", metadata: [
                    "destinations.count": "\(destinations.count)",
                    "destinations.changed": "\(deliveries.count)",
                    "destinations.evaluation_us": "\(elapsed.components.attoseconds / 1_000_000_000_000 + elapsed.components.seconds * 1_000_000)",
                ])
            }
            return deliveries
        } catch {
            // The query socket failed; the next wake-up asks again, and a
            // socket that keeps failing is reopened by the status's own evaluation.
            logger.error("route lookups for watched destinations failed", metadata: ["error": "\(error)"])
            return []
        }
    }

    private func send(_ deliveries: [DestinationWatches.Delivery], _ now: ContinuousClock.Instant) {
        for delivery in deliveries where clients.contains(delivery.client) {
            deliver(delivery.line, to: delivery.client, now, stream: delivery.stream)
            settle(delivery.client)
        }
    }

    /// The status to publish, when reading `source` changed it.
    private func handle(_ source: NetworkEngine.Source, _ now: ContinuousClock.Instant) throws -> NetworkStatus? {
        let outcome = try engine.handle(source, now: now)
        try registerNewDescriptors()
        return outcome.status
    }

    /// The engine's descriptors that came since: a reopened netlink socket
    /// (the old one left the poll when it was closed), the /etc watch made
    /// with the first name watched.
    private func registerNewDescriptors() throws {
        for (source, fd) in engine.takeNewDescriptors() {
            do { try poll.add(fd, .engine(source), interest: .readable) } catch {
                // Without netlink the daemon is deaf: better stopped, and restarted.
                guard source != .netlink else { throw error }
                logger.error("cannot wait for the resolver's files; watched names resolve again only when the path changes",
                             metadata: ["error": "\(error)"])
            }
        }
    }

    /// Writes the new status to every subscriber that wants it, before
    /// anything else: each line is encoded once, and only when someone reads
    /// it; a subscriber still writing an older line only has it replaced.
    private func publish(_ status: NetworkStatus) {
        let summaryChanged = published.update(status)
        let now = ContinuousClock.now
        let full = clients.subscribers(.full)
        if !full.isEmpty { fanOut(.full, to: full, now) }
        if summaryChanged { fanOut(.summary, to: clients.subscribers(.summary), now) }
        checker?.observe(status, now: now)
        metrics.observe(status)
        // Subscribers first: the log line and systemd's STATUS= cost about
        // 0.1 ms, which no subscriber should wait for.
        announce(status)
        writeTextfile()
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
                updateInterest(of: client)
            }
        }
        // Dropped after the loop: dropping reorders the list being walked.
        for client in broken { drop(client) }
    }

    private func announce(_ status: NetworkStatus) {
        // One timestamp per line: the log's (or journald's).
        // Under journald each change is one structured entry, and the
        // line on stderr would say it again; elsewhere the line is all, and
        // so it is where an entry could be neither sent nor held (no
        // native socket, or a backlog already full): nothing goes unsaid.
        let entered = journal?.send(JournalEntry.entries(for: status, first: !announcedFirst)) ?? false
        if journal != nil { waitOnJournal() }
        if !entered { logger.info("\(StatusFormatter.changeLine(status, timed: false))") }
        announcedFirst = true
        systemd.status(StatusFormatter.oneLine(status))
    }

    /// The status as an answer (to `get`, `subscribe`, `check`).
    private func deliverStatus(_ detail: StatusDetail, to client: ClientConnection, _ now: ContinuousClock.Instant) {
        let (line, kind) = statusLine(detail, for: client, asNews: false)
        if !client.send(line, status: kind, now: now) { drop(client) }
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

    private func deliver(
        _ line: [UInt8], to client: ClientConnection, _ now: ContinuousClock.Instant,
        stream: ClientConnection.OutputStream = .status
    ) {
        if !client.send(line, stream: stream, now: now) { drop(client) }
    }

    private func drop(_ client: ClientConnection) {
        guard clients.contains(client) else { return }
        if client.awaitsCheck { checkWaiters.removeAll { $0.client === client } }
        destinations.remove(client)
        clients.remove(client)
        // A descriptor frees: listeners paused for want of one go on (the
        // pass's end waits on them again).
        admission.clientLeft()
        metricsListener?.resume()
        // Closing takes it out of the event poll too.
        close(client.fd)
    }

    private func shutDown() {
        systemd.stopping()
        for client in Array(clients.all) { drop(client) }
        admission.listener.close()
        metricsListener?.close()
        // A stopped daemon knows nothing of the host: no value beats a stale one.
        metricsTextfile?.remove()
        logger.info("stopped", metadata: ["socket.path": "\(admission.listener.path)"])
        // What still waits for journald goes if there is room; the loop is over.
        journal?.flush()
    }
}
