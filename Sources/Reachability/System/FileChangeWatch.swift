#if canImport(Glibc)
import Glibc
#endif

/// Tells an event loop that some files in a few directories changed: the
/// resolver's configuration (`/etc/resolv.conf`, `/etc/hosts`, and
/// systemd-resolved's servers in `/run/systemd/resolve`), or a daemon's
/// socket made where a client waits for one.
///
/// Watches the directory, not the files: resolvconf, NetworkManager and
/// systemd-resolved replace `/etc/resolv.conf` by renaming a new file over
/// it, which a watch on the old file never sees. inotify costs nothing until
/// something in the directory changes.
package final class FileChangeWatch {
    /// Readable when something happened in the directory: then call
    /// ``takeChanges()``.
    package let fileDescriptor: Int32
    private let names: Set<String>

    /// Files written, replaced or removed: what a reader of their contents
    /// must see.
    package static let contentChanges = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM)

    /// Watches each of `directories`, and each of `optional` that exists (a
    /// directory made later is not watched), for `events` on files named
    /// one of `names`.
    package init(
        directories: [String], optional: [String] = [], names: Set<String>, events mask: UInt32 = contentChanges
    ) throws(SystemError) {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw SystemError("inotify_init1") }
        for directory in directories where inotify_add_watch(fd, directory, mask) < 0 {
            let error = SystemError("inotify_add_watch \(directory)")
            close(fd)
            throw error
        }
        for other in optional { _ = inotify_add_watch(fd, other, mask) }
        fileDescriptor = fd
        self.names = names
    }

    /// The resolver's configuration: what `getaddrinfo` reads in `/etc`,
    /// the file `/etc/resolv.conf` links to (resolvconf, NetworkManager and
    /// resolved rewrite it where it is, in `/run`), and the servers
    /// systemd-resolved writes where its stub is the resolver.
    package static func resolverConfiguration() throws(SystemError) -> FileChangeWatch {
        var optional = ["/run/systemd/resolve"]
        var names: Set<String> = ["resolv.conf", "hosts", "nsswitch.conf"]
        if let target = realpath("/etc/resolv.conf", nil) {
            defer { free(target) }
            let path = String(cString: target)
            if let slash = path.lastIndex(of: "/"), path[..<slash] != "/etc" {
                optional.append(String(path[..<slash]))
                names.insert(String(path[path.index(after: slash)...]))
            }
        }
        return try FileChangeWatch(directories: ["/etc"], optional: optional, names: names)
    }

    /// Where the daemons' sockets at `paths` would appear: each one's
    /// directory, or, where that does not exist yet (`/run/reachd` before
    /// the daemon's first start), the nearest one that does, for the next
    /// name down the path. A client tries again at each event, and watches
    /// anew from where the path then ends. Every directory is watched or
    /// none is: a path left unwatched would be waited for without end.
    package static func daemonSockets(_ paths: [String]) throws(SystemError) -> FileChangeWatch {
        // A directory made between finding it missing and watching its
        // parent sends its parent no event: looked for again once watched.
        for _ in 0..<8 {
            let before = socketTargets(paths)
            guard !before.isEmpty else { throw SystemError("no socket path to watch", errno: EINVAL) }
            // Made (a socket is bound, a directory made) or renamed into place,
            // and the watched directory going: a runtime directory sees files
            // written all day, and each would wake a waiting client.
            let watch = try FileChangeWatch(
                directories: Array(Set(before.map(\.directory))), names: Set(before.map(\.name)),
                events: UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF))
            if socketTargets(paths).elementsEqual(before, by: ==) { return watch }
        }
        throw SystemError("the daemon's socket directories keep changing", errno: EAGAIN)
    }

    /// For each path, the nearest directory that exists and the next name
    /// down the path from it.
    private static func socketTargets(_ paths: [String]) -> [(directory: String, name: String)] {
        paths.map { path in
            var (directory, name) = split(path)
            while access(directory, F_OK) != 0, directory != "/", directory != "." { (directory, name) = split(directory) }
            return (directory, name)
        }
    }

    /// The directory a path is in, and its last name.
    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    deinit { close(fileDescriptor) }

    /// Reads every queued event. Returns whether any concerned one of the
    /// names (an overflow of the queue counts as a change).
    package func takeChanges() -> Bool {
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return changed }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let (mask, length) = buffer.withUnsafeBytes { raw in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.mask, Int(event.len))
                }
                let nameBytes = buffer[(offset + headerSize)..<min(offset + headerSize + length, count)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                // A watched directory went (removed, moved, or its file system
                // unmounted): what it held may come back anywhere below.
                let directoryWent = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)
                if mask & (UInt32(IN_Q_OVERFLOW) | directoryWent) != 0 || names.contains(name) { changed = true }
                offset += headerSize + length
            }
        }
    }
}
