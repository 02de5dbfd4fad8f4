import Logging
import Reachability
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's log lines on stderr (and the client commands' warnings), in
/// one of two forms:
///
/// - for journald, when systemd connected stderr to the journal: a `<N>`
///   syslog priority prefix on each line (sd-daemon(3)), so `journalctl -p`
///   and the colours work, and no timestamp of our own, which journald adds;
/// - for a terminal or a file: a UTC timestamp and the level, as swift-log's
///   stream handler writes them.
///
/// Written by hand, not swift-log's `StreamLogHandler`: formatting a line there
/// took 50-130 µs (a local-time conversion per line, the metadata sorted
/// through several strings), and the daemon logs each change right after
/// writing it to subscribers, on a core they are waiting for.
struct DaemonLogHandler: LogHandler {
    enum Form {
        case journal
        case terminal
    }

    let form: Form
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(form: Form) {
        self.form = form
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line: String
        switch form {
        case .journal: line = "<\(Self.priority(event.level))>"
        case .terminal: line = Timestamp.format(Date()) + " " + event.level.rawValue + " "
        }
        // One event, one line: a newline from outside (a portal's header, a
        // client's request) must not forge a second entry in the journal.
        line += event.message.description.escapingControlCharacters
        let extra = event.metadata ?? [:]
        if !metadata.isEmpty || !extra.isEmpty {
            for (key, value) in metadata.merging(extra, uniquingKeysWith: { $1 }).sorted(by: { $0.key < $1.key }) {
                line += " \(key.escapingControlCharacters)=\("\(value)".escapingControlCharacters)"
            }
        }
        Console.error(line)
    }

    /// syslog(3) priorities: 7 debug, 6 info, 5 notice, 4 warning, 3 err, 2 crit.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Whether stderr is the journal stream systemd set up: `JOURNAL_STREAM`
    /// holds its device and inode (`DEV:INODE`), and they must still be stderr's
    /// (a child whose stderr was redirected inherits the variable).
    static func stderrIsTheJournal(_ value: String? = getenv("JOURNAL_STREAM").map { String(cString: $0) }) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
