#if canImport(Glibc)
import Glibc
#endif

/// Tells an event loop that some files in a few directories changed: the
/// resolver's configuration (`/etc/resolv.conf`, `/etc/hosts`, and
/// systemd-resolved's servers in `/run/systemd/resolve`).
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

    /// Watches `directory`, and each of `optional` that exists (a directory
    /// made later is not watched), for files named one of `names`.
    package init(directory: String, optional: [String] = [], names: Set<String>) throws(SystemError) {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw SystemError("inotify_init1") }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM)
        guard inotify_add_watch(fd, directory, mask) >= 0 else {
            close(fd)
            throw SystemError("inotify_add_watch \(directory)")
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
        return try FileChangeWatch(directory: "/etc", optional: optional, names: names)
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
                if mask & UInt32(IN_Q_OVERFLOW) != 0 || names.contains(name) { changed = true }
                offset += headerSize + length
            }
        }
    }
}
