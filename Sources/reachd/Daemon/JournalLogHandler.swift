import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Log lines for journald, when systemd connected stderr to the journal: a
/// `<N>` syslog priority prefix on each line (sd-daemon(3)), so `journalctl -p`
/// and the colours work, and no timestamp of our own, which journald adds.
/// Written by hand: it is one line of formatting, and swift-log's stream
/// handler always prints its own timestamp.
struct JournalLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }
            .sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value)" }
        Console.error("<\(Self.priority(event.level))>\(event.message)" + (fields.isEmpty ? "" : " " + fields.joined(separator: " ")))
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
