import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's listening socket. Replaces a stale socket file left by a crashed
/// daemon, refuses to start beside a live one, and on close removes the path
/// only if it is still the file it created.
final class ListeningSocket {
    let path: String
    let fd: Int32
    /// The socket file this daemon created, to remove on close; `nil` for a
    /// socket systemd passed, whose file belongs to the socket unit.
    private let createdInode: ino_t?

    init(path: String) throws(DaemonStartError) {
        self.path = path
        try Self.createParentDirectory(of: path)
        fd = try Self.bindReplacingStale(path)
        var info = stat()
        createdInode = stat(path, &info) == 0 ? info.st_ino : nil
    }

    /// Adopts a listening socket passed by systemd (socket activation).
    init(passed fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        createdInode = nil
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    func close() {
        Glibc.close(fd)
        var info = stat()
        if let createdInode, stat(path, &info) == 0, info.st_ino == createdInode { unlink(path) }
    }

    /// The protocol only reads: any local user may ask.
    private static let mode: mode_t = 0o666

    private static func bindReplacingStale(_ path: String) throws(DaemonStartError) -> Int32 {
        do {
            return try UnixSocket.listen(at: path, mode: mode)
        } catch where error.errno == EADDRINUSE {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else {
                throw .pathTaken(path: path)
            }
            if let live = try? UnixSocket.connect(to: path) {
                Glibc.close(live)
                throw .alreadyRunning(path: path)
            }
            unlink(path)
            do { return try UnixSocket.listen(at: path, mode: mode) } catch { throw .cannotListen(path: path, cause: error) }
        } catch {
            throw .cannotListen(path: path, cause: error)
        }
    }

    private static func createParentDirectory(of path: String) throws(DaemonStartError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let directory = String(path[..<slash])
        var info = stat()
        if stat(directory, &info) == 0 { return }
        // One level only, as systemd's RuntimeDirectory= would: /run/reachd.
        guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
            throw .cannotListen(path: path, cause: SystemError("create directory \(directory)"))
        }
    }
}

/// Why the daemon could not start listening.
enum DaemonStartError: Error, CustomStringConvertible {
    case alreadyRunning(path: String)
    case pathTaken(path: String)
    case cannotListen(path: String, cause: SystemError)

    var description: String {
        switch self {
        case .alreadyRunning(let path):
            "another reachd daemon is already listening on \(path); stop it first, or pass --socket PATH to run a second one"
        case .pathTaken(let path):
            "\(path) exists and is not a socket; remove it or pass --socket PATH"
        case .cannotListen(let path, let cause):
            "cannot listen on \(path): \(cause.description)"
        }
    }
}
