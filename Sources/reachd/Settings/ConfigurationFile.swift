#if canImport(Glibc)
import Glibc
#endif

/// `/etc/reachd/reachd.conf`: the keyfile format of NetworkManager.conf and
/// systemd's units, which administrators know. `[section]` lines, `key = value`
/// lines, `#` and `;` comments. Strict: an unknown section or key, or a line
/// that is neither, is an error that names the file, the line and what is
/// known, so a typo never silently turns a setting off.
///
/// Parsed by hand: no package here reads keyfiles, and TOMLKit would bring a
/// C++ build for some forty lines of parsing.
struct ConfigurationFile: Equatable {
    /// The sections and keys reachd reads, each documented in the shipped file.
    static let known: [String: Set<String>] = [
        "connectivity": ["enabled", "url", "expect", "timeout", "interval"],
        "metrics": ["listen", "textfile", "hosts"],
        "watch": ["targets"],
    ]
    /// Sections whose keys are the administrator's: `[metered]` names interfaces.
    static let open: Set<String> = ["metered"]

    let path: String
    /// `section.key` to value and line number.
    private(set) var values: [String: (value: String, line: Int)] = [:]

    static func == (lhs: ConfigurationFile, rhs: ConfigurationFile) -> Bool {
        lhs.path == rhs.path && lhs.values.mapValues(\.value) == rhs.values.mapValues(\.value)
    }

    init(path: String, text: String) throws(ConfigurationError) {
        self.path = path
        var section: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = raw.trimmingSpaces()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else { throw .malformed(path: path, line: number, text: line) }
                let name = String(line.dropFirst().dropLast()).trimmingSpaces()
                guard Self.known[name] != nil || Self.open.contains(name) else {
                    throw .unknownSection(
                        path: path, line: number, section: name, known: (Array(Self.known.keys) + Self.open).sorted())
                }
                section = name
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { throw .malformed(path: path, line: number, text: line) }
            let key = line[..<equals].trimmingSpaces()
            let value = line[line.index(after: equals)...].trimmingSpaces()
            guard let section else { throw .outsideSection(path: path, line: number, key: key) }
            guard Self.open.contains(section) || Self.known[section]!.contains(key) else {
                throw .unknownKey(path: path, line: number, section: section, key: key, known: Self.known[section]!.sorted())
            }
            values["\(section).\(key)"] = (value, number)
        }
    }

    /// The file at `path`, or `nil` when there is none (an absent file is an
    /// empty configuration; an unreadable one is an error).
    static func load(_ path: String) throws(ConfigurationError) -> ConfigurationFile? {
        guard let file = fopen(path, "r") else {
            if errno == ENOENT { return nil }
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return try ConfigurationFile(path: path, text: String(decoding: bytes, as: UTF8.self))
    }

    /// The keys set in `section`, in no particular order.
    func keys(in section: String) -> [String] {
        values.keys.filter { $0.hasPrefix(section + ".") }.map { String($0.dropFirst(section.count + 1)) }
    }

    /// The value of `key` in `section`, if set.
    func string(_ section: String, _ key: String) -> String? {
        values["\(section).\(key)"]?.value
    }

    /// `yes`/`no` (and `true`/`false`, `on`/`off`, `1`/`0`, as systemd accepts).
    func bool(_ section: String, _ key: String) throws(ConfigurationError) -> Bool? {
        guard let (value, line) = values["\(section).\(key)"] else { return nil }
        switch value.lowercased() {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: throw .badValue(path: path, line: line, key: key, value: value, expected: "yes or no")
        }
    }

    /// A number of seconds within `range`.
    func duration(_ section: String, _ key: String, in range: SecondsRange) throws(ConfigurationError) -> Duration? {
        guard let (value, line) = values["\(section).\(key)"] else { return nil }
        guard let duration = range.duration(value) else {
            throw .badValue(path: path, line: line, key: key, value: value, expected: range.description)
        }
        return duration
    }

    /// The line `key` is set on, to point at in errors about its value.
    func line(_ section: String, _ key: String) -> Int? {
        values["\(section).\(key)"]?.line
    }
}

/// What is wrong with a configuration file, and where.
enum ConfigurationError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case malformed(path: String, line: Int, text: String)
    case unknownSection(path: String, line: Int, section: String, known: [String])
    case outsideSection(path: String, line: Int, key: String)
    case unknownKey(path: String, line: Int, section: String, key: String, known: [String])
    case badValue(path: String, line: Int, key: String, value: String, expected: String)
    case invalid(path: String, line: Int, reason: String)

    var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot read \(path): \(reason)"
        case .malformed(let path, let line, let text):
            "\(path):\(line): \"\(text)\" is neither [section] nor key = value"
        case .unknownSection(let path, let line, let section, let known):
            "\(path):\(line): unknown section [\(section)]; known: \(known.map { "[\($0)]" }.joined(separator: ", "))"
        case .outsideSection(let path, let line, let key):
            "\(path):\(line): \(key) is outside any section; put it under [connectivity]"
        case .unknownKey(let path, let line, let section, let key, let known):
            "\(path):\(line): unknown key \(key) in [\(section)]; known: \(known.joined(separator: ", "))"
        case .badValue(let path, let line, let key, let value, let expected):
            "\(path):\(line): \(key) = \(value) is not \(expected)"
        case .invalid(let path, let line, let reason):
            "\(path):\(line): \(reason)"
        }
    }
}
