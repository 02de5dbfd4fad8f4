import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The metrics as a file for node_exporter's textfile collector, replaced
/// whole on every change: written to a new temporary file in the same
/// directory (a hidden name the collector skips: it reads `*.prom` only),
/// flushed, and renamed over the file, so that a scrape never reads half of
/// one, and a crash leaves the old file or the new one.
///
/// Written as the daemon's user, which may be root (`make run`): nothing any
/// other user put in the directory is followed. The temporary file is
/// created under a fresh name with `O_EXCL | O_NOFOLLOW`, and a rename
/// replaces a link rather than writing through it. A directory another user
/// can write is refused unless it is sticky, for there they could swap the
/// file between the checks; in a sticky one, so is a file another user owns.
struct MetricsTextfile {
    let path: String
    private let directory: String
    private let name: String

    /// Why the file was not written.
    enum Failure: Error, Equatable, CustomStringConvertible {
        case system(SystemError)
        /// The directory is another user's, or others may write in it.
        case unsafeDirectory(String, reason: String)
        /// In a sticky directory, the file belongs to another user.
        case foreignFile(String, owner: uid_t)

        var description: String {
            switch self {
            case .system(let error):
                "\(error); the daemon's user needs to write in the directory (under the unit: /run/reachd/metrics)"
            case .unsafeDirectory(let directory, let reason):
                "\(directory) \(reason), who could plant a link where the daemon writes; write in a directory of the "
                    + "daemon's own (/run/reachd/metrics/reachd.prom), linked from the collector's (the README's tmpfiles.d line)"
            case .foreignFile(let path, let owner):
                "\(path) belongs to user \(owner), not the daemon's, in a directory others share; remove it, or "
                    + "write in a directory of the daemon's own (/run/reachd/metrics/reachd.prom)"
            }
        }
    }

    init(path: String) {
        self.path = path
        let slash = path.lastIndex(of: "/")!
        directory = slash == path.startIndex ? "/" : String(path[..<slash])
        name = String(path[path.index(after: slash)...])
    }

    /// Replaces the file with `exposition`; why it could not, if it could not.
    func write(_ exposition: [UInt8]) -> Failure? {
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return .system(SystemError("open \(directory)")) }
        defer { close(folder) }
        if let refusal = checkSafe(folder) { return refusal }
        var created: (fd: Int32, name: String)?
        for _ in 0..<8 where created == nil {
            let candidate = ".\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
            let fd = openat(folder, candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 { created = (fd, candidate) } else if errno != EEXIST { break }
        }
        guard let (fd, temporary) = created else { return .system(SystemError("create a temporary file in \(directory)")) }
        func fail(_ operation: String) -> Failure {
            let error = SystemError(operation)
            close(fd)
            unlinkat(folder, temporary, 0)
            return .system(error)
        }
        // Readable by node_exporter's user whatever the umask (the unit's
        // is 0077): the metrics are no secret.
        guard fchmod(fd, 0o644) == 0 else { return fail("set the mode of \(directory)/\(temporary)") }
        var offset = 0
        while offset < exposition.count {
            let written = exposition[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return fail("write \(directory)/\(temporary)") }
            offset += written
        }
        guard fsync(fd) == 0 else { return fail("flush \(directory)/\(temporary)") }
        close(fd)
        guard renameat(folder, temporary, folder, name) == 0 else {
            let error = SystemError("rename \(directory)/\(temporary) to \(path)")
            unlinkat(folder, temporary, 0)
            return .system(error)
        }
        return nil
    }

    /// Refuses a directory another user owns or may write, unless it is
    /// sticky; in a sticky one, a file another user owns.
    private func checkSafe(_ folder: Int32) -> Failure? {
        var info = stat()
        guard fstat(folder, &info) == 0 else { return .system(SystemError("stat \(directory)")) }
        let me = geteuid()
        if info.st_uid != me, info.st_uid != 0 {
            return .unsafeDirectory(directory, reason: "belongs to user \(info.st_uid)")
        }
        let sticky = info.st_mode & S_ISVTX != 0
        // The group's other members are other users too.
        let othersWrite = info.st_mode & (S_IWOTH | S_IWGRP) != 0
        if othersWrite, !sticky {
            return .unsafeDirectory(directory, reason: "can be written by other users (mode \(String(info.st_mode & 0o7777, radix: 8)))")
        }
        guard sticky else { return nil }
        var file = stat()
        if fstatat(folder, name, &file, AT_SYMLINK_NOFOLLOW) == 0, file.st_uid != me {
            return .foreignFile(path, owner: file.st_uid)
        }
        return nil
    }

    /// Removes the file, when the daemon stops: a file left behind would
    /// tell the collector a state nobody watches any more. A link is removed,
    /// never followed.
    func remove() {
        unlink(path)
    }
}
