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
    private let mask: UInt32
    /// The directories watched once they exist, as they are now: each
    /// called for again at every change (a link re-pointed moves one).
    private let awaited: () -> [String]
    /// Those of them that exist and are watched, and their watches.
    private var reached: [String: Int32] = [:]
    /// Where the others would appear: the nearest existing directory of
    /// each, watched for the next name down the path, and those names.
    private var descentWatches: [String: Int32] = [:]
    private var descentNames: Set<String> = []
    /// The watches of the directories watched for themselves, never
    /// removed: by watch, not by name, as an awaited path may be another
    /// name of one of them.
    private let watchedDirectories: Set<Int32>
    /// Watches removed here (a descent's, or a directory's no longer
    /// awaited), whose IN_IGNORED is ours and no change.
    private var removedWatches: Set<Int32> = []

    /// Files written, replaced or removed: what a reader of their contents
    /// must see.
    package static let contentChanges = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM)

    /// Watches each of `directories`, and each of `awaiting` once it exists
    /// (until then, its nearest existing ancestor for the next directory
    /// down its path), for `events` on files named one of `names`.
    package init(
        directories: [String], awaiting: @escaping () -> [String] = { [] }, names: Set<String>,
        events mask: UInt32 = contentChanges
    ) throws(SystemError) {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw SystemError("inotify_init1") }
        var watched: Set<Int32> = []
        for directory in directories {
            let watch = inotify_add_watch(fd, directory, mask)
            guard watch >= 0 else {
                let error = SystemError("inotify_add_watch \(directory)")
                close(fd)
                throw error
            }
            watched.insert(watch)
        }
        fileDescriptor = fd
        self.names = names
        self.mask = mask
        self.awaited = { awaiting().map(Self.normalised) }
        watchedDirectories = watched
        _ = descend()
    }

    /// The resolver's configuration: what `getaddrinfo` reads in `/etc`,
    /// the directory `/etc/resolv.conf` links to (resolvconf, NetworkManager
    /// and resolved rewrite it where it is, in `/run`), and the servers
    /// systemd-resolved writes where its stub is the resolver. At boot the
    /// link may point into a `/run/systemd/resolve` resolved has not made
    /// yet: it is waited for, and read once it comes.
    ///
    /// Resolved's directory is awaited only where the resolver is resolved
    /// (the link, or a file naming its stub): awaiting it means watching
    /// `/run/systemd`, where inotify cannot tell `resolve` from the other
    /// entries systemd makes there (`systemd-analyze verify` makes
    /// `systemd-units-load`), and each would wake a quiet reader. A change
    /// of `/etc/resolv.conf` asks anew which directories to await.
    package static func resolverConfiguration() throws(SystemError) -> FileChangeWatch {
        var names: Set<String> = ["resolv.conf", "hosts", "nsswitch.conf"]
        if let target = resolvConfTarget() { names.insert(split(target).name) }
        return try FileChangeWatch(directories: ["/etc"], awaiting: {
            var directories: [String] = []
            if let target = resolvConfTarget(), case let directory = split(target).directory, directory != "/etc" {
                directories.append(directory)
            }
            let resolved = split(ResolverConfiguration.resolvedServersFile).directory
            if !directories.contains(resolved),
                ResolverConfiguration(parsing: SmallFile.read("/etc/resolv.conf") ?? "").pointsAtResolvedStub
            {
                directories.append(resolved)
            }
            return directories
        }, names: names)
    }

    /// Where `/etc/resolv.conf` leads, whether or not that exists yet:
    /// each link followed in turn, a relative one from the directory it is
    /// in (NixOS chains two, through `/etc/static`, into resolved's
    /// directory), to a path that is no link; that path's real one where it
    /// exists. `nil` when `/etc/resolv.conf` is a file, or the links loop.
    private static func resolvConfTarget() -> String? {
        var path = "/etc/resolv.conf"
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        // The kernel's own limit (MAXSYMLINKS).
        for hop in 0...40 {
            let count = readlink(path, &buffer, buffer.count - 1)
            guard count > 0 else {
                guard hop > 0 else { return nil }
                guard let real = realpath(path, nil) else { return normalised(path) }
                defer { free(real) }
                return String(cString: real)
            }
            let link = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // The link's directory exists (the link was read in it), and is
            // taken as it really is: `..` climbs from there, not from a
            // linked name of it.
            let directory = realpath(split(path).directory, nil).map { real in
                defer { free(real) }
                return String(cString: real)
            } ?? split(path).directory
            path = link.hasPrefix("/") ? link : directory + "/" + link
        }
        return nil
    }

    /// Watches each awaited directory that exists, and the nearest
    /// existing ancestor of each other one. Returns whether one was
    /// reached since the last call: its files may be there already.
    private func descend() -> Bool {
        let paths = awaited()
        var nowReached: [String: Int32] = [:]
        var ancestors: [String: Set<String>] = [:]
        // A directory made between finding it missing and watching its
        // parent sends the parent no event: looked for again once watched.
        for _ in 0..<8 {
            let before = Self.nearestExisting(paths)
            nowReached = [:]
            ancestors = [:]
            for (path, nearest) in zip(paths, before) {
                if access(path, F_OK) == 0, case let watch = inotify_add_watch(fileDescriptor, path, mask), watch >= 0 {
                    nowReached[path] = watch
                } else {
                    ancestors[nearest.directory, default: []].insert(nearest.name)
                }
            }
            for directory in ancestors.keys where descentWatches[directory] == nil {
                // Added to whatever else watches that directory, never in its place.
                let watch = inotify_add_watch(fileDescriptor, directory, UInt32(IN_CREATE | IN_MOVED_TO | IN_MASK_ADD))
                if watch >= 0 { descentWatches[directory] = watch }
            }
            if Self.nearestExisting(paths).elementsEqual(before, by: ==) { break }
        }
        for (directory, watch) in descentWatches where ancestors[directory] == nil {
            descentWatches[directory] = nil
            release(watch, reached: nowReached)
        }
        // A directory no longer awaited (the resolver is no longer resolved)
        // would wake a quiet reader at each of its writes.
        for (directory, watch) in reached where nowReached[directory] == nil {
            release(watch, reached: nowReached)
        }
        descentNames = ancestors.values.reduce(into: []) { $0.formUnion($1) }
        defer { reached = nowReached }
        return !Set(nowReached.keys).subtracting(reached.keys).isEmpty
    }

    /// Removes `watch`, no longer wanted for what added it, unless it is
    /// still wanted otherwise: inotify keeps one watch per directory,
    /// whoever asked for it, kept while the directory is watched for
    /// itself, reached, or another awaited path's nearest ancestor.
    private func release(_ watch: Int32, reached nowReached: [String: Int32]) {
        let stillWanted = watchedDirectories.contains(watch) || nowReached.values.contains(watch)
            || descentWatches.values.contains(watch)
        if !stillWanted, inotify_rm_watch(fileDescriptor, watch) == 0 { removedWatches.insert(watch) }
    }

    /// `path` with `.` and `..` taken lexically (`/etc/../run` is `/run`),
    /// so that one directory has one name here.
    static func normalised(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
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
            let before = nearestExisting(paths)
            guard !before.isEmpty else { throw SystemError("no socket path to watch", errno: EINVAL) }
            // Made (a socket is bound, a directory made) or renamed into place,
            // and the watched directory going: a runtime directory sees files
            // written all day, and each would wake a waiting client.
            let watch = try FileChangeWatch(
                directories: Array(Set(before.map(\.directory))), names: Set(before.map(\.name)),
                events: UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF))
            if nearestExisting(paths).elementsEqual(before, by: ==) { return watch }
        }
        throw SystemError("the daemon's socket directories keep changing", errno: EAGAIN)
    }

    /// For each path, the nearest directory that exists and the next name
    /// down the path from it.
    private static func nearestExisting(_ paths: [String]) -> [(directory: String, name: String)] {
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
        // A directory on the way to an awaited one came.
        var descended = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
            guard count > 0 else {
                // Watched anew from where the paths now end; an awaited
                // directory reached is a change.
                if changed || descended, descend() { changed = true }
                return changed
            }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameBytes = buffer[(offset + headerSize)..<min(offset + headerSize + length, count)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                // A watched directory went (removed, moved, or its file system
                // unmounted): what it held may come back anywhere below.
                let directoryWent = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)
                // But a watch this removed itself ended, and no more.
                let ours = mask & UInt32(IN_IGNORED) != 0 && removedWatches.remove(watch) != nil
                if !ours, mask & (UInt32(IN_Q_OVERFLOW) | directoryWent) != 0 || names.contains(name) { changed = true }
                if descentNames.contains(name) { descended = true }
                offset += headerSize + length
            }
        }
    }
}
