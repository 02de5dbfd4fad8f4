import Reachability

/// Sends ``JournalEntry``s to journald with its native protocol: one
/// datagram of `FIELD=value` lines on `/run/systemd/journal/socket`.
///
/// Written here rather than by linking libsystemd's `sd_journal_send`, as
/// ``SystemdNotifier`` is: the protocol is a documented datagram
/// (systemd.io/JOURNAL_NATIVE_PROTOCOL), our entries are a few hundred bytes
/// (never the memfd path for large ones), and the daemon should run where
/// libsystemd is not installed. journald adds `_PID`, `_SYSTEMD_UNIT` and the
/// time from the socket's credentials, as for a line on stderr.
///
/// Sent without waiting, on the event loop: entries that find journald's
/// queue full wait, in order, for the loop to see ``fileDescriptor``
/// writable and ``flush()`` them, up to ``backlog``; a journald that stops
/// reading costs the entries beyond that (``dropped``, for the metrics),
/// never the loop. Under journald these entries are the record of a change
/// (no stderr line says it again); a change whose entry is dropped is
/// logged on stderr instead (DaemonServer), and counted.
final class JournalWriter {
    static let systemSocket = "/run/systemd/journal/socket"
    /// Entries held while journald's queue is full: a burst of changes
    /// (a flapping link) is hundreds of entries at most.
    static let backlog = 256
    private let sender: DatagramSender
    var socketPath: String { sender.path }
    /// Entries dropped since the daemon started: the backlog was full, or
    /// journald was not there.
    var dropped: Int { sender.dropped }
    /// Wait for this to be writable while ``isBacklogged``, then ``flush()``.
    var fileDescriptor: Int32? { sender.fileDescriptor }
    /// Changes when ``fileDescriptor`` is a new socket, whatever its number.
    var connections: Int { sender.connections }
    var isBacklogged: Bool { sender.isBacklogged }

    init(socketPath: String = JournalWriter.systemSocket) {
        sender = DatagramSender(path: socketPath, backlog: Self.backlog)
    }

    /// Sends the entries that wait, until journald's queue is full again.
    func flush() {
        sender.flush()
    }

    /// Sends each entry, or holds it behind those waiting; whether none was
    /// dropped.
    @discardableResult
    func send(_ entries: [JournalEntry]) -> Bool {
        var sentAll = true
        for entry in entries where !sender.send(Self.datagram(entry)) { sentAll = false }
        return sentAll
    }

    /// The entry in the native protocol's form. Every value has its control
    /// characters escaped here, at the one sink (idempotent, so what was
    /// escaped where it was made passes unchanged): an interface name is
    /// any bytes a local user with a network namespace chose, and a field
    /// must not steer whoever reads the journal in a terminal.
    static func datagram(_ entry: JournalEntry) -> [UInt8] {
        var bytes: [UInt8] = []
        let fields = [
            ("MESSAGE_ID", entry.kind.messageID), ("MESSAGE", entry.message), ("PRIORITY", "\(entry.priority)"),
            ("SYSLOG_IDENTIFIER", "reachd"),
        ] + entry.fields
        for (name, value) in fields { append(name, value.escapingControlCharacters, to: &bytes) }
        return bytes
    }

    /// `NAME=value\n`, or, for a value with a newline, the binary-safe form:
    /// `NAME\n`, the length as a little-endian 64-bit number, the bytes,
    /// `\n`. Values come escaped, without newlines, but a forged field must
    /// never be one newline away.
    private static func append(_ name: String, _ value: String, to bytes: inout [UInt8]) {
        let utf8 = Array(value.utf8)
        bytes += Array(name.utf8)
        if utf8.contains(UInt8(ascii: "\n")) {
            bytes.append(UInt8(ascii: "\n"))
            withUnsafeBytes(of: UInt64(utf8.count).littleEndian) { bytes += $0 }
        } else {
            bytes.append(UInt8(ascii: "="))
        }
        bytes += utf8
        bytes.append(UInt8(ascii: "\n"))
    }
}
