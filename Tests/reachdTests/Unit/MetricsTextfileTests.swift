import Foundation
import Testing
@testable import reachd

#if canImport(Glibc)
import Glibc
#endif

/// The textfile is written as the daemon's user, root under `make run`:
/// whatever another user planted beside it must not turn that into a write
/// elsewhere. Run as root, which makes files of other users (`lchown`).
@Suite("Metrics textfile", .enabled(if: getuid() == 0, "needs root, to plant files of other users"))
struct MetricsTextfileTests {
    static let exposition = Array("reachd_online 1\n".utf8)
    static let someoneElse: uid_t = 4242

    /// A fresh directory with `mode`, owned by `owner`, and a file outside
    /// it that must not change: root's, 0600, "precious".
    static func scene(mode: mode_t, owner: uid_t = 0) throws -> (directory: String, victim: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("rd-textfile-\(UUID().uuidString.prefix(8))").path
        let directory = base + "/collector"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(chmod(directory, mode) == 0 && chown(directory, owner, owner) == 0)
        let victim = base + "/precious"
        try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
        #expect(chmod(victim, 0o600) == 0)
        return (directory, victim)
    }

    /// Removes what `scene` made: the directory's parent, with the victim.
    static func clear(_ directory: String) {
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: directory).deletingLastPathComponent().path)
    }

    static func unchanged(_ victim: String) throws -> Bool {
        var info = stat()
        return try String(contentsOfFile: victim, encoding: .utf8) == "precious" && stat(victim, &info) == 0
            && info.st_mode & 0o7777 == 0o600
    }

    /// Links at the file's name and at every temporary name an older daemon
    /// used, in a directory only root writes: each is replaced or left,
    /// never written through.
    @Test func linksBesideTheFileAreNeverFollowed() throws {
        let (directory, victim) = try Self.scene(mode: 0o755)
        defer { Self.clear(directory) }
        for name in ["reachd.prom", "reachd.prom.tmp", ".reachd.prom.tmp"] {
            #expect(symlink(victim, directory + "/" + name) == 0)
        }
        let textfile = MetricsTextfile(path: directory + "/reachd.prom")
        #expect(textfile.write(Self.exposition) == nil)
        #expect(try Self.unchanged(victim), "the file outside the directory is untouched")
        var info = stat()
        #expect(lstat(directory + "/reachd.prom", &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o777 == 0o644)
        #expect(try String(contentsOfFile: directory + "/reachd.prom", encoding: .utf8) == "reachd_online 1\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(left == [".reachd.prom.tmp", "reachd.prom", "reachd.prom.tmp"], "no temporary file left: \(left)")
        textfile.remove()
        #expect(try Self.unchanged(victim))
    }

    /// Where another user may write, they could swap a name between the
    /// daemon's checks: refused, saying where to write instead.
    @Test func aDirectoryOthersCanWriteIsRefused() throws {
        for (mode, owner) in [(0o777 as mode_t, 0 as uid_t), (0o775, 0), (0o755, Self.someoneElse)] {
            let (directory, victim) = try Self.scene(mode: mode, owner: owner)
            defer { Self.clear(directory) }
            #expect(symlink(victim, directory + "/reachd.prom") == 0)
            let failure = MetricsTextfile(path: directory + "/reachd.prom").write(Self.exposition)
            guard case .unsafeDirectory? = failure else {
                Issue.record("mode \(String(mode, radix: 8)), owner \(owner): \(failure.map { "\($0)" } ?? "written")")
                continue
            }
            #expect("\(failure!)".contains("/run/reachd/metrics/reachd.prom"), "says what to do")
            #expect(try Self.unchanged(victim))
        }
    }

    /// A sticky directory (as /tmp) keeps others from replacing the
    /// daemon's own file, but a file another user made there first is theirs.
    @Test func inAStickyDirectoryAnotherUsersFileIsRefused() throws {
        let (directory, victim) = try Self.scene(mode: 0o1777)
        defer { Self.clear(directory) }
        let textfile = MetricsTextfile(path: directory + "/reachd.prom")
        #expect(symlink(victim, directory + "/reachd.prom") == 0 && lchown(directory + "/reachd.prom", Self.someoneElse, Self.someoneElse) == 0)
        guard case .foreignFile(_, let owner)? = textfile.write(Self.exposition) else {
            Issue.record("another user's link was replaced or written through")
            return
        }
        #expect(owner == Self.someoneElse)
        #expect(try Self.unchanged(victim))
        // Once it is gone, the daemon's own file is written there.
        #expect(unlink(directory + "/reachd.prom") == 0)
        #expect(textfile.write(Self.exposition) == nil)
        #expect(textfile.write(Self.exposition) == nil, "and replaced, being the daemon's")
    }
}
