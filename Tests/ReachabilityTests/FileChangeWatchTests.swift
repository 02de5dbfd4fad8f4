import Foundation
import Testing
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The watch on the resolver's files: a file renamed over one of them (as
/// resolvconf and systemd-resolved replace resolv.conf) counts, and so does
/// writing it in place; other files in the directory do not.
@Suite("Watching the resolver's files")
struct FileChangeWatchTests {
    @Test func replacedAndRewrittenFilesCountOthersDoNot() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let watch = try FileChangeWatch(directories: [directory.path], names: ["resolv.conf", "hosts"])
        #expect(!watch.takeChanges(), "nothing happened yet")

        try "other\n".write(to: directory.appendingPathComponent("motd"), atomically: false, encoding: .utf8)
        #expect(!watch.takeChanges(), "another file in the directory")

        // Atomically: written to a temporary file, then renamed over the name.
        try "nameserver 10.8.0.1\n".write(to: directory.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        #expect(Self.readable(watch) && watch.takeChanges(), "renamed over resolv.conf")
        #expect(!watch.takeChanges(), "each change is taken once")

        let hosts = directory.appendingPathComponent("hosts")
        try "127.0.0.1 localhost\n".write(to: hosts, atomically: false, encoding: .utf8)
        #expect(Self.readable(watch) && watch.takeChanges(), "hosts created")
        // The same file, opened and written again: no creation, no rename.
        let handle = try FileHandle(forWritingTo: hosts)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("10.8.0.10 wiki.corp.example\n".utf8))
        try handle.close()
        #expect(Self.readable(watch) && watch.takeChanges(), "hosts written in place")
    }

    /// Where a daemon's socket would appear, from a directory that does not
    /// exist yet: the nearest one that does is watched for the next name
    /// down the path, and a watch made anew once that appears sees the
    /// socket bound there. Its directory going counts too: what it held may
    /// come back.
    @Test func aSocketIsSeenAppearingFromTheNearestDirectoryThatExists() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let later = directory.appendingPathComponent("run/reachd")
        let socket = later.appendingPathComponent("reachd.sock").path

        let nearest = try FileChangeWatch.daemonSockets([socket])
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("other"), withIntermediateDirectories: false)
        #expect(!nearest.takeChanges(), "another directory")
        try FileManager.default.createDirectory(at: later, withIntermediateDirectories: true)
        #expect(Self.readable(nearest) && nearest.takeChanges(), "run/ made, on the way to the socket")

        let inside = try FileChangeWatch.daemonSockets([socket])
        let listener = try UnixSocket.listen(at: socket, mode: 0o666)
        #expect(Self.readable(inside) && inside.takeChanges(), "the socket bound")

        // The daemon gone (its socket held the directory until then), and
        // its runtime directory with it.
        let beside = try FileChangeWatch.daemonSockets([socket])
        close(listener)
        try FileManager.default.removeItem(at: later)
        #expect(Self.readable(beside) && beside.takeChanges(), "its directory removed")
    }

    /// systemd-resolved's directory made after the watch (resolved started
    /// after the daemon, at boot): each directory down its path is watched
    /// as it comes, reaching it is a change (its files may be written
    /// already), and its files count from then on. Its going, and its
    /// coming back, count too.
    @Test func aDirectoryMadeLaterIsWatchedFromItsNearestAncestor() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let systemd = directory.appendingPathComponent("systemd"), resolve = systemd.appendingPathComponent("resolve")
        let watch = try FileChangeWatch(directories: [], awaiting: { [resolve.path] }, names: ["resolv.conf"])
        #expect(!watch.takeChanges(), "nothing happened yet")

        try FileManager.default.createDirectory(at: directory.appendingPathComponent("other"), withIntermediateDirectories: false)
        #expect(!watch.takeChanges(), "another directory")
        try FileManager.default.createDirectory(at: systemd, withIntermediateDirectories: false)
        #expect(Self.readable(watch) && !watch.takeChanges(), "on the way, not there yet")
        try FileManager.default.createDirectory(at: resolve, withIntermediateDirectories: false)
        #expect(Self.readable(watch) && watch.takeChanges(), "reached")
        try "nameserver 10.77.0.53\n".write(to: resolve.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        #expect(Self.readable(watch) && watch.takeChanges(), "its file written")
        try "x\n".write(to: resolve.appendingPathComponent("other"), atomically: false, encoding: .utf8)
        #expect(!watch.takeChanges(), "another file in it")

        try FileManager.default.removeItem(at: systemd)
        #expect(Self.readable(watch) && watch.takeChanges(), "gone")
        try FileManager.default.createDirectory(at: resolve, withIntermediateDirectories: true)
        _ = Self.readable(watch) && watch.takeChanges()
        try "nameserver 10.77.0.54\n".write(to: resolve.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        #expect(Self.readable(watch) && watch.takeChanges(), "its file written after it came back")
    }

    /// A directory reached, then no longer awaited (the resolver left
    /// systemd-resolved): its writes wake the reader no more. Before, its
    /// watch stayed, and each of resolved's rewrites woke a quiet client.
    @Test func aDirectoryNoLongerAwaitedIsNoLongerWatched() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcw-\(UUID().uuidString)")
        let etc = directory.appendingPathComponent("etc"), resolve = directory.appendingPathComponent("resolve")
        for folder in [etc, resolve] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        defer { try? FileManager.default.removeItem(at: directory) }
        final class Awaited { var paths: [String] = [] }
        let awaited = Awaited()
        awaited.paths = [resolve.path]
        let watch = try FileChangeWatch(directories: [etc.path], awaiting: { awaited.paths }, names: ["resolv.conf"])
        try "nameserver 10.77.0.53\n".write(to: resolve.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        #expect(Self.readable(watch) && watch.takeChanges(), "awaited and reached: its file counts")

        awaited.paths = []
        try "nameserver 10.77.0.1\n".write(to: etc.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        #expect(Self.readable(watch) && watch.takeChanges(), "the configuration changed")
        // The removed watch's own IN_IGNORED, which is no change.
        #expect(!(Self.readable(watch, within: 100) && watch.takeChanges()))
        try "nameserver 10.77.0.54\n".write(to: resolve.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        #expect(!Self.readable(watch, within: 300), "a directory no longer awaited woke the reader")
        try "nameserver 10.77.0.2\n".write(to: etc.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        #expect(Self.readable(watch) && watch.takeChanges(), "the directory watched for itself still counts")
    }

    static func readable(_ watch: FileChangeWatch, within milliseconds: Int32 = 1000) -> Bool {
        var descriptor = pollfd(fd: watch.fileDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) == 1
    }
}
