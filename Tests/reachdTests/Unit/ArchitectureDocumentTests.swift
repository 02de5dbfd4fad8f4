import Foundation
import Testing
import TestSupport

/// docs/ARCHITECTURE.md's folder table is the map a new reader starts from:
/// it must name every folder of code, and no folder that is gone.
@Suite("docs/ARCHITECTURE.md")
struct ArchitectureDocumentTests {
    static let sources = TestInstallation.packageRoot.appendingPathComponent("Sources")

    /// The folders the table must list, relative to `Sources/`: each
    /// target's subfolders of code where it has some, else the target
    /// itself. A DocC catalog is no folder of code.
    static func foldersOfCode() throws -> Set<String> {
        let manager = FileManager.default
        func subfolders(_ url: URL) throws -> [String] {
            try manager.contentsOfDirectory(atPath: url.path).filter { name in
                var isFolder: ObjCBool = false
                return !name.hasSuffix(".docc")
                    && manager.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isFolder)
                    && isFolder.boolValue
            }
        }
        var folders: Set<String> = []
        for target in try subfolders(sources) {
            let inner = try subfolders(sources.appendingPathComponent(target))
            folders.formUnion(inner.isEmpty ? [target] : inner.map { "\(target)/\($0)" })
        }
        return folders
    }

    /// The first column of the table under "## Each folder's job".
    static func listedFolders() throws -> [String] {
        let text = try String(
            contentsOf: TestInstallation.packageRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let section = try #require(text.split(separator: "\n## ").first { $0.hasPrefix("Each folder's job") })
        let row = try Regex(#"(?m)^\| `([^`]+)` \|"#)
        return section.matches(of: row).compactMap { $0.output[1].substring.map(String.init) }
    }

    @Test func theFolderTableListsEveryFolderOfCodeOnce() throws {
        let listed = try Self.listedFolders()
        let tree = try Self.foldersOfCode()
        #expect(tree.contains("reachd/Metrics") && tree.contains("CNetlink"), "the tree was read: \(tree)")
        #expect(listed.count == Set(listed).count, "a folder listed twice: \(listed)")
        #expect(tree.subtracting(listed).isEmpty, "folders the table misses: \(tree.subtracting(listed).sorted())")
        #expect(Set(listed).subtracting(tree).isEmpty, "listed, but gone: \(Set(listed).subtracting(tree).sorted())")
    }
}
