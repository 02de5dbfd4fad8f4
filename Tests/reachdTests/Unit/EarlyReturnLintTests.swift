import Foundation
import Testing
import TestSupport

/// A test that returns early may have skipped its assertions and still
/// passes: `guard let x = … else { return }` is a test that asserts nothing
/// when `x` is missing. A test returns only from a block that asserted or
/// recorded something first; otherwise it uses `try #require`, which fails.
@Suite("Tests that cannot skip their assertions")
struct EarlyReturnLintTests {
    /// Where each `return` leaves a `@Test` function from a block that has
    /// neither asserted (`#expect`, `#require`) nor recorded an issue. A
    /// return from a closure or a nested function is not the test's.
    ///
    /// Read line by line: string literals and comments are blanked, and each
    /// `{` is a block (it follows `if`, `guard … else`, `for`, `while`, `do`,
    /// `switch`, `catch`, `defer`, `repeat` or `else`) or something else,
    /// whose `return` is not the test's.
    static func silentReturns(in source: String, file: String) -> [String] {
        var found: [String] = []
        var inTest = false
        var armed = false  // an @Test attribute waits for its function's body
        // Per open brace: whether it is the test's body or a block in it, and
        // whether that block asserted.
        var stack: [(returnsFromTest: Bool, asserted: Bool)] = []
        var inMultilineString = false
        for (number, rawLine) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            // A multi-line string literal (a sample of code, a script) is
            // text: skipped from the line that opens it to the one that closes it.
            let delimiters = rawLine.components(separatedBy: "\"\"\"").count - 1
            if inMultilineString {
                if delimiters % 2 == 1 { inMultilineString = false }
                continue
            }
            if delimiters % 2 == 1 { inMultilineString = true }
            let line = code(of: rawLine)
            if !inTest, line.trimmingCharacters(in: .whitespaces).hasPrefix("@Test") { armed = true }
            var statement = ""
            var index = line.startIndex
            while index < line.endIndex {
                let character = line[index]
                switch character {
                case "{":
                    if armed && !inTest {
                        inTest = true
                        armed = false
                        stack = [(true, false)]
                    } else if inTest {
                        let opensBlock = Self.opensBlock(statement)
                        stack.append((opensBlock && stack.last?.returnsFromTest == true, false))
                    }
                    statement = ""
                case "}":
                    if inTest {
                        stack.removeLast()
                        if stack.isEmpty { inTest = false }
                    }
                    statement = "} "
                default:
                    statement.append(character)
                    if inTest, !stack.isEmpty {
                        let tail = statement.suffix(16)
                        if tail.hasSuffix("#expect") || tail.hasSuffix("#require") || tail.hasSuffix("Issue.record") {
                            stack[stack.count - 1].asserted = true
                        }
                        if tail.hasSuffix("return"), isWordEnd(line, after: index), isWordStart(statement, length: 6),
                            let top = stack.last, top.returnsFromTest, !top.asserted
                        {
                            found.append("\(file):\(number + 1): \(rawLine.trimmingCharacters(in: .whitespaces))")
                        }
                    }
                }
                index = line.index(after: index)
            }
        }
        return found
    }

    /// Whether the statement before a `{` makes it a block of the function
    /// it is in, rather than a closure.
    static func opensBlock(_ statement: String) -> Bool {
        var text = statement.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("}") { text = text.dropFirst().trimmingCharacters(in: .whitespaces) }
        let leading = ["if ", "guard ", "for ", "while ", "switch ", "catch", "else", "do", "defer", "repeat"]
        if leading.contains(where: { text == $0.trimmingCharacters(in: .whitespaces) || text.hasPrefix($0) }) {
            // `if let x = items.first(where: {` opens a closure inside the condition.
            return !text.hasSuffix("(") && !text.hasSuffix(" in") && !text.hasSuffix("=")
        }
        return text.hasSuffix(" else") || text.hasSuffix(" do")
    }

    /// The line with string literals and a trailing comment blanked.
    static func code(of line: Substring) -> String {
        var result = ""
        var inString = false
        var escaped = false
        var previous: Character = " "
        for character in line {
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" {
                    inString = false
                }
                result.append(" ")
            } else if character == "\"" {
                inString = true
                result.append(" ")
            } else if character == "/", previous == "/" {
                result.removeLast()
                break
            } else {
                result.append(character)
            }
            previous = character
        }
        return result
    }

    private static func isWordEnd(_ line: String, after index: String.Index) -> Bool {
        let next = line.index(after: index)
        return next == line.endIndex || !(line[next].isLetter || line[next].isNumber || line[next] == "_")
    }

    private static func isWordStart(_ statement: String, length: Int) -> Bool {
        let start = statement.index(statement.endIndex, offsetBy: -length)
        guard start > statement.startIndex else { return true }
        let before = statement[statement.index(before: start)]
        return !(before.isLetter || before.isNumber || before == "_" || before == ".")
    }

    @Test func noTestReturnsBeforeAsserting() throws {
        let root = TestInstallation.packageRoot.appendingPathComponent("Tests")
        let files = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 50, "read the tests: \(files.count) files")
        var found: [String] = []
        for file in files {
            let source = try String(contentsOf: file, encoding: .utf8)
            found += Self.silentReturns(in: source, file: file.lastPathComponent)
        }
        #expect(found.isEmpty, "a test that can return before asserting:\n\(found.joined(separator: "\n"))")
    }

    /// The lint finds what it is for, and leaves closures and asserted
    /// branches alone.
    @Test func theLintFindsASilentReturnAndOnlyThat() {
        let source = """
            @Test func skipsQuietly() throws {
                guard let value = Int("x") else { return }
                #expect(value == 1)
            }
            @Test func returnsFromAClosure() async throws {
                let first = try await eventually("it") { items.first { $0 > 1 } ?? { return nil }() }
                let mapped = items.map { item -> Int in return item + 1 }
                if mapped.isEmpty {
                    #expect(first == 0)
                    return
                }
                // return in a comment, "return" in a string
                for item in items { if item > 3 { return } }
            }
            """
        let found = Self.silentReturns(in: source, file: "Sample.swift")
        #expect(found.map { $0.components(separatedBy: ":")[1] } == ["2", "13"], "\(found)")
    }
}
