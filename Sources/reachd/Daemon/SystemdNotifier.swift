import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd how the daemon is doing: READY=1, STATUS=, WATCHDOG=1,
/// STOPPING=1 (the sd_notify protocol).
///
/// Written here rather than by linking libsystemd: the protocol is one
/// datagram on the AF_UNIX socket named by $NOTIFY_SOCKET (a path, or an
/// abstract name written with a leading "@"), and the daemon should not need
/// libsystemd installed to run outside systemd. Without $NOTIFY_SOCKET every
/// call does nothing.
struct SystemdNotifier {
    /// Never waits: systemd reads its notify socket at once, and a
    /// notification it had no room for is worth less than the loop.
    private let sender: DatagramSender?
    /// Half of WATCHDOG_USEC when systemd's watchdog is on for this process.
    let watchdogInterval: Duration?

    init(environment: [String: String] = Self.environment()) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        sender = path.map { DatagramSender(path: $0) }
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if forUs, let text = environment["WATCHDOG_USEC"], let micros = Int64(text), micros > 0 {
            watchdogInterval = .microseconds(micros / 2)
        } else {
            watchdogInterval = nil
        }
    }

    var isEnabled: Bool { sender != nil }

    // A newline in STATUS= would start another assignment (WATCHDOG=1, say):
    // the text carries interface names and a portal's URL.
    func ready(status: String) { send("READY=1\nSTATUS=\(status.escapingControlCharacters)") }
    func status(_ text: String) { send("STATUS=\(text.escapingControlCharacters)") }
    func watchdog() { send("WATCHDOG=1") }
    func stopping() { send("STOPPING=1") }

    private func send(_ message: String) {
        sender?.send(Array(message.utf8))
    }

    static func environment() -> [String: String] {
        var result: [String: String] = [:]
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            if let value = getenv(name) { result[name] = String(cString: value) }
        }
        return result
    }
}
