import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The metrics as a file for node_exporter's textfile collector, replaced
/// whole on every change: written to a temporary name in the same directory
/// (which the collector skips: it reads `*.prom` only) and renamed over the
/// file, so that a scrape never reads half of one.
struct MetricsTextfile {
    let path: String
    private var temporary: String { path + ".tmp" }

    init(path: String) {
        self.path = path
    }

    /// Replaces the file with `exposition`; the error, if it could not.
    func write(_ exposition: [UInt8]) -> SystemError? {
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return SystemError("create \(temporary)") }
        // Readable by node_exporter's user whatever the umask (the unit's
        // is 0077): the metrics are no secret.
        fchmod(fd, 0o644)
        var offset = 0
        while offset < exposition.count {
            let written = exposition[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                let error = SystemError("write \(temporary)")
                close(fd)
                unlink(temporary)
                return error
            }
            offset += written
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = SystemError("rename \(temporary) to \(path)")
            unlink(temporary)
            return error
        }
        return nil
    }

    /// Removes the file, when the daemon stops: a file left behind would
    /// tell the collector a state nobody watches any more.
    func remove() {
        unlink(path)
    }
}
