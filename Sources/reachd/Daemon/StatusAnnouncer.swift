import Logging
import Reachability

/// What the daemon tells its operators and systemd, as a service of its
/// loop: each published change as a log line or, when stderr is the journal,
/// as structured entries; systemd's READY=, STATUS=, STOPPING= and the
/// watchdog's pings; and journald's socket in the event poll while entries
/// wait for room in its queue.
///
/// Run after the subscribers are written to: the log line and STATUS= cost
/// about 0.1 ms, which no subscriber should wait for.
final class StatusAnnouncer {
    private let logger: Logger
    private let systemd: SystemdNotifier
    /// Where each change also goes as structured entries, when stderr is the journal.
    private let journal: JournalWriter?
    /// The first status was announced: the next ones are changes.
    private var announcedFirst = false
    /// The journal's socket in the event poll (by its connection, as a
    /// reconnection may reuse the number), and whether it is waited on:
    /// only while entries wait for room in journald's queue.
    private var journalRegistered: Int?
    private var journalWaited = false
    private var nextWatchdogPing: ContinuousClock.Instant?

    init(systemd: SystemdNotifier, journal: JournalWriter?, logger: Logger) {
        self.systemd = systemd
        self.journal = journal
        self.logger = logger
    }

    /// Entries journald never took (its queue stayed full).
    var journalDropped: Int { journal?.dropped ?? 0 }

    /// The watchdog's next ping; `nil` without a watchdog.
    var nextDeadline: ContinuousClock.Instant? { nextWatchdogPing }

    /// The first status, announced once the socket listens: systemd hears READY=1.
    func ready(_ first: NetworkStatus, poll: EventPoll<DaemonEventToken>) {
        announce(first, poll: poll)
        systemd.ready(status: StatusFormatter.oneLine(first))
        nextWatchdogPing = systemd.watchdogInterval.map { .now + $0 }
    }

    func announce(_ status: NetworkStatus, poll: EventPoll<DaemonEventToken>) {
        // One timestamp per line: the log's (or journald's).
        // Under journald each change is one structured entry, and the
        // line on stderr would say it again; elsewhere the line is all, and
        // so it is where an entry could be neither sent nor held (no
        // native socket, or a backlog already full): nothing goes unsaid.
        let entered = journal?.send(JournalEntry.entries(for: status, first: !announcedFirst)) ?? false
        if journal != nil { waitOnJournal(poll) }
        if !entered { logger.info("\(StatusFormatter.changeLine(status, timed: false))") }
        announcedFirst = true
        // Formatted only for a systemd that listens.
        if systemd.isEnabled { systemd.status(StatusFormatter.oneLine(status)) }
    }

    /// journald's socket has room: what waited goes.
    func journalWritable(poll: EventPoll<DaemonEventToken>) {
        journal?.flush()
        waitOnJournal(poll)
    }

    /// Pings the watchdog when that is due: from the loop, so that a hung
    /// loop is caught.
    func pingWatchdogIfDue(_ now: ContinuousClock.Instant) {
        guard let due = nextWatchdogPing, let interval = systemd.watchdogInterval, now >= due else { return }
        systemd.watchdog()
        nextWatchdogPing = now + interval
    }

    /// The loop is over: systemd hears STOPPING=1 first, and what still
    /// waits for journald goes last, if there is room.
    func stopping() { systemd.stopping() }
    func stopped() { journal?.flush() }

    /// Waits for room in journald's queue while entries wait for it, and
    /// not otherwise: a writable socket would wake the loop at once.
    private func waitOnJournal(_ poll: EventPoll<DaemonEventToken>) {
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
}

extension StatusAnnouncer: DaemonService {
    /// The journal's socket is waited on only while a line waits for it,
    /// which announcing sets.
    func endPass(_ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) {}

    func observe(_ status: NetworkStatus, _ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) {
        announce(status, poll: poll)
    }
}
