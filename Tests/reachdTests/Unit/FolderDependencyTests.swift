import Foundation
import Testing
import TestSupport

/// Each module's folders use each other one way only, as docs/ARCHITECTURE.md
/// draws them: what a folder may use is below it, never above, so none
/// reaches back into one that uses it.
@Suite("The folders of reachd and of the library")
struct FolderDependencyTests {
    /// A module's folders and what each may use besides itself (and, in
    /// reachd, the library).
    struct Layering: Sendable, CustomTestStringConvertible {
        var module: String
        var allowed: [String: Set<String>]
        /// Names and the folder that must be found to declare them: the
        /// test's own check that it reads declarations at all.
        var landmarks: [String: String]
        var testDescription: String { module }
        var root: URL { TestInstallation.packageRoot.appendingPathComponent("Sources/\(module)") }
    }

    static let layerings = [
        Layering(module: "reachd", allowed: [
            "Output": [],
            "Connectivity": [],
            "Settings": ["Connectivity"],
            "Metrics": ["Settings"],
            "Daemon": ["Metrics", "Settings", "Connectivity", "Output"],
            "Commands": ["Daemon", "Metrics", "Settings", "Connectivity", "Output"],
            "": ["Commands", "Output"],
        ], landmarks: ["DaemonServer": "Daemon", "StatusFormatter": "Output", "notOnline": "Commands"]),
        // The library, as docs/ARCHITECTURE.md draws it: the model below
        // everything, the kernel's side and the wire's side beside each other.
        Layering(module: "Reachability", allowed: [
            "": [],
            "Model": [],
            "System": ["Model"],
            "Netlink": ["Model"],
            "Protocol": ["Model"],
            "Monitor": ["Model", "Netlink", "System"],
            "Client": ["Model", "Monitor", "Netlink", "Protocol", "System"],
        ], landmarks: ["FollowSession": "Client", "ProtocolValue": "Model", "RouteLookupRefusal": "Netlink"]),
    ]

    /// Each Swift file of a module, by folder ("" for the module's root),
    /// with its code (comments left out, which may name anything) and how
    /// many lines it has in all.
    static func files(under root: URL) throws -> [(folder: String, name: String, code: String, lines: Int)] {
        let paths = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return try paths.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                .joined(separator: "\n")
            let folder = path.contains("/") ? String(path.split(separator: "/")[0]) : ""
            return (folder, path, code, text.count { $0 == "\n" })
        }
    }

    @Test(arguments: layerings)
    func eachFolderUsesOnlyTheFoldersBelowIt(layering: Layering) throws {
        let files = try Self.files(under: layering.root)
        #expect(Set(files.map(\.folder)) == Set(layering.allowed.keys), "a folder the rule does not know, or one gone")
        // The types each folder declares at the top level.
        var home: [String: String] = [:]
        let declaration = try Regex(#"(?m)^(?:(?:private|fileprivate|package|public|final) )*(?:struct|enum|class|protocol|typealias|actor) (\w+)"#)
        for file in files {
            for match in file.code.matches(of: declaration) {
                if let name = match.output[1].substring { home[String(name)] = file.folder }
            }
        }
        // And what extensions of other modules' types add for the rest of
        // this one (`ExitCode.notOnline`). A member added to a type of this
        // module is not counted (its name is too common to tell a use: the
        // library's `NetworkNamespace.current`), so a member added above a
        // folder to a type below it goes unseen: today only Client/ does
        // that, to types of Protocol/ and its own.
        let extensionBlock = try Regex(#"(?ms)^extension (\w+)[^\n]*\{\n(.*?)^\}"#)
        let member = try Regex(#"(?m)^    (?:static |package |public )*(?:let|var|func) (\w+)"#)
        let declared = Set(home.keys)
        for file in files {
            for block in file.code.matches(of: extensionBlock) {
                guard let extended = block.output[1].substring, !declared.contains(String(extended)),
                    let body = block.output[2].substring
                else { continue }
                for match in body.matches(of: member) {
                    if let name = match.output[1].substring { home[String(name)] = file.folder }
                }
            }
        }
        for (name, folder) in layering.landmarks {
            #expect(home[name] == folder, "\(name) is declared in \(folder)/, and the test did not find it there")
        }
        for file in files {
            let words = Self.words(of: file.code)
            for (type, folder) in home where folder != file.folder && !layering.allowed[file.folder]!.contains(folder) {
                let used = words.contains(type)
                #expect(!used, "\(file.name) uses \(type), of \(folder.isEmpty ? "the root" : folder)/")
            }
        }
    }

    /// The identifiers in `code`: its runs of letters, digits and `_`, so
    /// that `StatusFormatter.describe` is two. One pass per file, where a
    /// regular expression per name and file (`\bName\b`) kept both of the
    /// test runner's threads busy for 30 s of a loaded CI run, and every
    /// timed test in the process waited for a thread.
    static func words(of code: String) -> Set<String> {
        Set(code.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
    }

    /// Where each C module may be imported, as the folder table says: the C
    /// boundary stays in one place per module.
    static let cImporters: [String: @Sendable (String) -> Bool] = [
        "CNetlink": { $0.hasPrefix("Reachability/Netlink/") },
        "CEventPoll": { $0 == "Reachability/System/EventPoll.swift" },
        "CScheduling": { $0 == "Reachability/System/TimeSlice.swift" },
        "CSystemd": { ["reachd/Daemon/SleepWatch.swift", "reachd/Daemon/LogindInbox.swift"].contains($0) },
    ]

    @Test func eachCModuleIsImportedOnlyWhereTheTableSays() throws {
        let sources = TestInstallation.packageRoot.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasPrefix("C") }
        #expect(Set(modules) == Set(Self.cImporters.keys), "a C module the rule does not know, or one gone")
        let importLine = try Regex(#"(?m)^(?:@_implementationOnly |internal |private |fileprivate |package |public )*import (C\w+)"#)
        var importersFound: [String: Int] = [:]
        for module in ["Reachability", "reachd", "ReachabilityPlaceholders"] {
            for file in try Self.files(under: sources.appendingPathComponent(module)) {
                let path = "\(module)/\(file.name)"
                for match in file.code.matches(of: importLine) {
                    guard let name = match.output[1].substring.map(String.init) else { continue }
                    importersFound[name, default: 0] += 1
                    let allowed = Self.cImporters[name]?(path) ?? false
                    #expect(allowed, "\(path) imports \(name), which the folder table keeps elsewhere")
                }
            }
        }
        // The test's own check that it reads imports at all.
        #expect(importersFound["CNetlink", default: 0] >= 5 && importersFound["CSystemd"] == 2, "\(importersFound)")
    }

    /// The library's pure cores: events in, state and effects out, decided
    /// without a system call, so that tests feed them values (tailscale's
    /// netmon: a pure core fed synthetic messages). No libc or Foundation
    /// to call: what the kernel says (a namespace, an errno) comes to them
    /// as a value their loop made.
    static let pureCores = [
        "Client/FollowState.swift", "Client/FollowStateMessages.swift", "Client/FollowStatePhase.swift",
        "Client/FollowStateDestinations.swift", "Client/FollowStateInProcess.swift",
        "Client/DaemonDiscovery.swift", "Client/DaemonLink.swift",
        "Client/RetrySchedule.swift", "Client/StatusStream.swift",
        "Client/FollowedDestinations.swift", "Client/DaemonFailureLog.swift", "Monitor/StatusDiff.swift",
        "Monitor/DNSEvaluator.swift", "Monitor/InterfaceTable.swift", "Monitor/LookupScope.swift",
        "Monitor/ConnectivityFindings.swift", "Monitor/DestinationEvaluator.swift",
    ]

    @Test func thePureCoresImportNoSystemLibrary() throws {
        let root = TestInstallation.packageRoot.appendingPathComponent("Sources/Reachability")
        let importLine = try Regex(#"(?m)^\s*(?:@\w+ )*import (\w+)"#)
        var imports: [String] = []
        let files = try Self.files(under: root).filter { Self.pureCores.contains($0.name) }
        #expect(Set(files.map(\.name)) == Set(Self.pureCores), "a pure core renamed or gone: update the list")
        for file in files {
            for match in file.code.matches(of: importLine) {
                guard let name = match.output[1].substring.map(String.init) else { continue }
                imports.append(name)
                #expect(name == "Logging", "\(file.name) imports \(name): a pure core is given what the system says")
            }
        }
        // The test's own check that it finds the files and reads imports.
        #expect(imports.count == 3, "\(imports)")
    }

    /// The GIO module's files include each other one way, as glib-networking's
    /// do: `reachd-reach.c` needs only GIO's GNetworkMonitor of the monitor
    /// that calls it, not the monitor's own header.
    @Test func theGIOModulesFilesIncludeEachOtherOneWay() throws {
        let folder = TestInstallation.packageRoot.appendingPathComponent("Sources/ReachdGIO")
        // A file and its header are one unit: "reachd-reach".
        var includes: [String: Set<String>] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
        where name.hasSuffix(".c") || name.hasSuffix(".h") {
            let unit = String(name.dropLast(2))
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("#include \"") {
                let included = line.dropFirst("#include \"".count).prefix { $0 != "\"" }
                if included.hasSuffix(".h"), String(included.dropLast(2)) != unit {
                    includes[unit, default: []].insert(String(included.dropLast(2)))
                }
            }
        }
        // The test's own check that it reads includes at all.
        #expect(includes["reachd-network-monitor"]?.contains("reachd-reach") == true, "\(includes)")
        var cycles: [String] = []
        func visit(_ unit: String, _ path: [String]) {
            for next in includes[unit, default: []].sorted() {
                if let start = path.firstIndex(of: next) {
                    cycles.append((path[start...] + [next]).joined(separator: " → "))
                } else {
                    visit(next, path + [next])
                }
            }
        }
        for unit in includes.keys.sorted() { visit(unit, [unit]) }
        #expect(cycles.isEmpty, "files that include each other: \(Set(cycles).sorted())")
    }
}
