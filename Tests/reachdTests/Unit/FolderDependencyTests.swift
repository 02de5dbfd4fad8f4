import Foundation
import Testing
import TestSupport

/// reachd's folders use each other one way only, as docs/ARCHITECTURE.md
/// draws them: what a folder may use is below it, never above, so none
/// reaches back into one that uses it.
@Suite("reachd's folders")
struct FolderDependencyTests {
    /// What each folder may use, besides the library and itself.
    static let allowed: [String: Set<String>] = [
        "Output": [],
        "Connectivity": [],
        "Settings": ["Connectivity"],
        "Metrics": ["Settings"],
        "Daemon": ["Metrics", "Settings", "Connectivity", "Output"],
        "Commands": ["Daemon", "Metrics", "Settings", "Connectivity", "Output"],
        "": ["Commands", "Output"],
    ]

    static let root = TestInstallation.packageRoot.appendingPathComponent("Sources/reachd")

    /// Each Swift file of reachd, by folder ("" for the root command), with
    /// its code: comments left out, which may name anything.
    static func files() throws -> [(folder: String, name: String, code: String)] {
        let paths = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return try paths.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                .joined(separator: "\n")
            let folder = path.contains("/") ? String(path.split(separator: "/")[0]) : ""
            return (folder, path, code)
        }
    }

    @Test func eachFolderUsesOnlyTheFoldersBelowIt() throws {
        let files = try Self.files()
        #expect(Set(files.map(\.folder)) == Set(Self.allowed.keys), "a folder the rule does not know, or one gone")
        // The types each folder declares at the top level.
        var home: [String: String] = [:]
        let declaration = try Regex(#"(?m)^(?:(?:private|fileprivate|package|public|final) )*(?:struct|enum|class|protocol|typealias|actor) (\w+)"#)
        for file in files {
            for match in file.code.matches(of: declaration) {
                if let name = match.output[1].substring { home[String(name)] = file.folder }
            }
        }
        // And what extensions add for the rest of the module (`ExitCode.notOnline`).
        let extensionBlock = try Regex(#"(?ms)^extension [^\n]*\{\n(.*?)^\}"#)
        let member = try Regex(#"(?m)^    (?:static |package |public )*(?:let|var|func) (\w+)"#)
        for file in files {
            for block in file.code.matches(of: extensionBlock) {
                guard let body = block.output[1].substring else { continue }
                for match in body.matches(of: member) {
                    if let name = match.output[1].substring { home[String(name)] = file.folder }
                }
            }
        }
        #expect(home["DaemonServer"] == "Daemon" && home["StatusFormatter"] == "Output", "the declarations were found")
        #expect(home["notOnline"] == "Commands", "an extension's member was found")
        for file in files {
            for (type, folder) in home where folder != file.folder && !Self.allowed[file.folder]!.contains(folder) {
                // Simple boundaries: Unicode's make `StatusFormatter.describe` one word.
                let uses = try Regex("\\b\(type)\\b").wordBoundaryKind(.simple)
                #expect(!file.code.contains(uses), "\(file.name) uses \(type), of \(folder.isEmpty ? "the root" : folder)/")
            }
        }
    }
}
