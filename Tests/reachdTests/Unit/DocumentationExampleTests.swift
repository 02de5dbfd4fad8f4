import Foundation
import Testing
import TestSupport

/// Every ```swift example in the README, the DocC catalog and the library's doc comments
/// compiles against the library as an app sees it (public API only): each is
/// wrapped in a function of its own and type-checked with `swiftc` against the
/// modules this test run was built with. An error names the example's own
/// file and line.
@Suite("Documentation examples")
struct DocumentationExampleTests {
    struct Example {
        let file: String
        /// The line of the example's first code line in `file`.
        let line: Int
        let code: [String]
    }

    static let root = TestInstallation.packageRoot

    /// What an example may take from its surroundings: the values it talks
    /// about, and the app's own functions it calls.
    static let prelude = """
        import Foundation
        #if canImport(FoundationNetworking)
        import FoundationNetworking
        #endif
        import Reachability
        import ReachabilityPlaceholders

        // The app's own, as examples call them.
        func show(_ content: PlaceholderContent) {}
        func showRows(_ decoration: ContentDecoration) {}
        func render(_ state: PlaceholderState?, _ content: PlaceholderContent? = nil) {}
        func reload() {}
        func updateBanner(_ online: Bool) {}
        let rows: [String] = []
        let url = URL(string: "https://example.com/items")!

        """

    /// The values an example may use without making them.
    static let parameters =
        "status: NetworkStatus, monitor: ReachabilityMonitor, engine: inout PlaceholderEngine, "
        + "event: PlaceholderEvent, state: PlaceholderState, catalog: PlaceholderCatalog"

    static func examples() throws -> [Example] {
        var examples: [Example] = []
        func collect(_ path: String, open: String, close: String, strip: (String) -> String) throws {
            let lines = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var index = 0
            while index < lines.count {
                defer { index += 1 }
                guard lines[index].trimmingCharacters(in: .whitespaces) == open else { continue }
                let first = index + 1
                var code: [String] = []
                index += 1
                while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != close {
                    code.append(strip(lines[index]))
                    index += 1
                }
                examples.append(Example(file: path, line: first + 1, code: code))
            }
        }
        try collect("README.md", open: "```swift", close: "```") { $0 }
        for module in modules {
            let catalog = "Sources/\(module)/\(module).docc"
            let articles = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)
            for article in articles.sorted() where article.hasSuffix(".md") {
                try collect("\(catalog)/\(article)", open: "```swift", close: "```") { $0 }
            }
            for file in sourceFiles(of: module) {
                try collect("Sources/\(module)/" + file, open: "/// ```swift", close: "/// ```") { line in
                    guard let range = line.range(of: "///") else { return line }
                    let text = line[range.upperBound...]
                    return String(text.hasPrefix(" ") ? text.dropFirst() : text)
                }
            }
        }
        return examples
    }

    /// The library's products, each a module an app imports.
    static let modules = ["Reachability", "ReachabilityPlaceholders"]

    /// A module's Swift files, relative to its folder.
    static func sourceFiles(of module: String) -> [String] {
        let folder = root.appendingPathComponent("Sources/\(module)")
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".swift") }.sorted()
    }

    /// Members that implement a protocol's requirement take its documentation.
    static let conformances = [
        "public init(from decoder", "public func encode(to encoder", "public var description",
        "public static func <",
    ]

    @Test func everyPublicDeclarationHasADocComment() throws {
        var undocumented: [String] = []
        var checked = 0
        for module in Self.modules {
          for file in Self.sourceFiles(of: module) {
            let path = "Sources/\(module)/\(file)"
            let lines = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            for (index, line) in lines.enumerated() where line.hasPrefix("public ") {
                guard !Self.conformances.contains(where: line.hasPrefix) else { continue }
                checked += 1
                // Attributes may stand between the comment and the declaration.
                var above = index - 1
                while above >= 0, lines[above].hasPrefix("@") { above -= 1 }
                if above < 0 || !lines[above].hasPrefix("///") {
                    undocumented.append("\(path):\(index + 1): \(line.prefix(90))")
                }
            }
          }
        }
        #expect(checked > 100, "checked \(checked) declarations")
        #expect(undocumented.isEmpty, "public declarations without a doc comment:\n\(undocumented.joined(separator: "\n"))")
    }

    /// Type-checks `source` as an app would, against the modules of this test
    /// run: the public API only.
    static func typecheck(_ source: String) async throws -> (status: Int32, output: String, error: String) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-examples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent("Examples.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let modules = URL(fileURLWithPath: Reachd.binary).deletingLastPathComponent().appendingPathComponent("Modules")
        // A test build exposes the library's internal imports of CNetlink,
        // CEventPoll and CScheduling: give swiftc their module maps and libnl's headers, as
        // the package does.
        let libnl = try await Subprocess.run(["/usr/bin/env", "pkg-config", "--cflags-only-I", "libnl-route-3.0"])
        let headers = libnl.output.split(separator: " ").flatMap { ["-Xcc", $0.trimmingCharacters(in: .whitespacesAndNewlines)] }
        return try await Subprocess.run(
            ["/usr/bin/env", "swiftc", "-typecheck", "-I", modules.path,
             "-I", Self.root.appendingPathComponent("Sources/CNetlink").path,
             "-I", Self.root.appendingPathComponent("Sources/CEventPoll").path,
             "-I", Self.root.appendingPathComponent("Sources/CScheduling").path] + headers + [file.path],
            timeout: .seconds(120))
    }

    @Test func theModuleNameQualifiesItsTypes() async throws {
        // The enum once named Reachability shadowed the module.
        let result = try await Self.typecheck("""
            import Reachability
            let status: Reachability.NetworkStatus? = nil
            let level: Reachability.ReachabilityLevel = .online
            """)
        #expect(result.status == 0, "\(result.error)")
    }

    /// The placeholder engine is a product of its own: a program that only
    /// asks about the network imports none of it.
    @Test func theLibraryAloneHasNoPlaceholders() async throws {
        let alone = try await Self.typecheck("""
            import Reachability
            let engine = PlaceholderEngine()
            """)
        #expect(alone.status != 0 && alone.error.contains("'PlaceholderEngine'"), "\(alone.error)")
        let both = try await Self.typecheck("""
            import Reachability
            import ReachabilityPlaceholders
            let engine = PlaceholderEngine()
            let status: NetworkStatus? = nil
            let condition = status.map(NetworkCondition.init) ?? .unknown
            """)
        #expect(both.status == 0, "\(both.error)")
    }

    @Test func theDaemonsOwnCodeIsNotPublic() async throws {
        let result = try await Self.typecheck("""
            import Reachability
            let request = ClientRequest.get
            let stamp = Timestamp.format(.now)
            let line = DaemonMessage.error(code: "x", message: "y").line()
            """)
        #expect(result.status != 0)
        for name in ["ClientRequest", "Timestamp", "line"] {
            #expect(result.error.contains("'\(name)'"), "\(name) should not be visible to apps:\n\(result.error)")
        }
    }

    @Test func thereAreExamplesToCheck() throws {
        let examples = try Self.examples()
        #expect(examples.count >= 15, "found \(examples.count)")
        #expect(examples.contains { $0.file == "README.md" })
        #expect(examples.contains { $0.file.hasSuffix("ChoosingAPlaceholder.md") })
    }

    @Test func everyExampleCompilesAgainstThePublicAPI() async throws {
        let examples = try Self.examples()
        var source = Self.prelude
        var origin: [Int: (file: String, line: Int)] = [:]
        var generatedLine = source.split(separator: "\n", omittingEmptySubsequences: false).count
        for (number, example) in examples.enumerated() {
            source += "func example\(number)(\(Self.parameters)) async throws {\n"
            generatedLine += 1
            for (offset, line) in example.code.enumerated() {
                // Imports belong to the file, which has them already.
                let code = line.hasPrefix("import ") ? "" : line
                source += "    " + code + "\n"
                origin[generatedLine] = (example.file, example.line + offset)
                generatedLine += 1
            }
            source += "}\n"
            generatedLine += 1
        }
        let result = try await Self.typecheck(source)
        let errors = result.error.split(separator: "\n").filter { $0.contains(": error: ") }.map { line -> String in
            // "/tmp/.../Examples.swift:LINE:COL: error: ..." -> "README.md:LINE: error: ..."
            let parts = line.split(separator: ":", maxSplits: 3)
            guard parts.count == 4, let generated = Int(parts[1]), let place = origin[generated] else { return String(line) }
            return "\(place.file):\(place.line): \(parts[3].trimmingCharacters(in: .whitespaces))"
        }
        #expect(result.status == 0 && errors.isEmpty, "examples that do not compile:\n\(errors.joined(separator: "\n"))\n\(errors.isEmpty ? result.error : "")")
    }

    /// The README's C (Swift's main actor on GTK's main loop) is the GTK
    /// example's own code, which its tests run: the block, line for line,
    /// stands in the bridge's source.
    @Test func theReadmesCIsTheGtkExamplesCode() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let bridge = try String(
            contentsOf: Self.root.appendingPathComponent("Examples/GtkListViewer/Sources/GtkBridge/GtkBridge.c"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```c\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
        #expect(!blocks.isEmpty, "the README shows no C")
        for block in blocks {
            #expect(bridge.contains(block), "README's C is not in GtkBridge.c:\n\(block)")
        }
    }
}
