#if canImport(Glibc)
import Glibc
#endif

/// `/etc/reachd/reachd.conf`: the keyfile format of NetworkManager.conf and
/// systemd's units, which administrators know. `[section]` lines, `key = value`
/// lines, `#` and `;` comments. Strict: an unknown section or key, a key set
/// twice, or a line that is neither, is an error that names the file, the
/// line and what is known, so a typo never silently turns a setting off.
///
/// Parsed by hand: no package here reads keyfiles, and TOMLKit would bring a
/// C++ build for some forty lines of parsing.
struct ConfigurationFile: Equatable {
    /// The sections and keys reachd reads, each documented in the shipped file.
    static let known: [String: Set<String>] = [
        "connectivity": [
            "enabled", "url", "expect", "timeout", "interval", "passive", "passive_failures", "passive_peers", "passive_window",
        ],
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

    /// Where the daemon reads it unless `--config` says otherwise.
    static let defaultPath = "/etc/reachd/reachd.conf"
    /// The largest file read: the shipped one, every comment kept, is 5 KiB.
    static let sizeLimit = 64 * 1024

    init(path: String, text: String) throws(ConfigurationError) {
        self.path = path
        var section: String?
        // Lines as editors write them: LF, CRLF (a `Character` of its own in
        // Swift, so splitting on "\n" alone never splits it) or a lone CR.
        // A byte-order mark, which Windows editors put first, is no text.
        let body = text.hasPrefix("\u{FEFF}") ? text.dropFirst() : Substring(text)
        let lines = body.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for (index, raw) in lines.enumerated() {
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
            // As a typo must not turn a setting off, a second value must
            // not silently win over the first.
            if let first = values["\(section).\(key)"] {
                throw .duplicateKey(path: path, line: number, section: section, key: key, firstLine: first.line)
            }
            values["\(section).\(key)"] = (value, number)
        }
    }

    /// The file at `path`, or `nil` when there is none and `path` is the
    /// default (an absent default file is an empty configuration). A path the
    /// user named must be a regular file: a typo must not silently start the
    /// daemon with every setting at its default.
    static func load(_ path: String, named: Bool) throws(ConfigurationError) -> ConfigurationFile? {
        // As for ssh -F and git: the way to say "no file", flags alone.
        if path == "/dev/null" { return nil }
        // O_NONBLOCK: a FIFO must not hold start-up until someone writes to it.
        // O_NOCTTY: a terminal named by mistake must not become the daemon's.
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            let error = errno
            if error == ENOENT, !named { return nil }
            if error == ENOENT { throw .missing(path: path) }
            // A socket can't be opened (ENXIO): say what it is.
            var info = stat()
            if error == ENXIO, stat(path, &info) == 0 { throw .notAFile(path: path, kind: Self.kind(info.st_mode)) }
            throw .unreadable(path: path, reason: String(cString: strerror(error)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notAFile(path: path, kind: Self.kind(info.st_mode)) }
        guard info.st_size <= Self.sizeLimit else { throw .tooLarge(path: path, size: Int(info.st_size)) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
            if count == 0 { break }
            bytes += buffer[0..<count]
            // It may grow while read: the limit holds for what is read too.
            guard bytes.count <= Self.sizeLimit else { throw .tooLarge(path: path, size: bytes.count) }
        }
        return try ConfigurationFile(path: path, text: String(decoding: bytes, as: UTF8.self))
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
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

    /// A whole number within `range`.
    func integer(_ section: String, _ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let (value, line) = values["\(section).\(key)"] else { return nil }
        guard let number = Int(value), range.contains(number) else {
            throw .badValue(path: path, line: line, key: key, value: value, expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
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
    /// A path the user named (`--config`) is not there.
    case missing(path: String)
    case notAFile(path: String, kind: String)
    case tooLarge(path: String, size: Int)
    case malformed(path: String, line: Int, text: String)
    case unknownSection(path: String, line: Int, section: String, known: [String])
    case outsideSection(path: String, line: Int, key: String)
    case unknownKey(path: String, line: Int, section: String, key: String, known: [String])
    case duplicateKey(path: String, line: Int, section: String, key: String, firstLine: Int)
    case badValue(path: String, line: Int, key: String, value: String, expected: String)
    case invalid(path: String, line: Int, reason: String)

    var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot read \(path): \(reason)"
        case .missing(let path):
            "no configuration file \(path); check the --config path, or leave out --config to read \(ConfigurationFile.defaultPath)"
        case .notAFile(let path, let kind):
            "\(path) is \(kind), not a configuration file; name a file with --config"
        case .tooLarge(let path, let size):
            "\(path) holds \(size) bytes or more, over the \(ConfigurationFile.sizeLimit / 1024) KiB a configuration file may be; is it the right file?"
        case .malformed(let path, let line, let text):
            "\(path):\(line): \"\(text)\" is neither [section] nor key = value"
        case .unknownSection(let path, let line, let section, let known):
            "\(path):\(line): unknown section [\(section)]; known: \(known.map { "[\($0)]" }.joined(separator: ", "))"
        case .outsideSection(let path, let line, let key):
            "\(path):\(line): \(key) is outside any section; put it under [connectivity]"
        case .unknownKey(let path, let line, let section, let key, let known):
            "\(path):\(line): unknown key \(key) in [\(section)]; known: \(known.joined(separator: ", "))"
        case .duplicateKey(let path, let line, let section, let key, let firstLine):
            "\(path):\(line): \(key) is set twice in [\(section)], on lines \(firstLine) and \(line); keep one"
        case .badValue(let path, let line, let key, let value, let expected):
            "\(path):\(line): \(key) = \(value) is not \(expected)"
        case .invalid(let path, let line, let reason):
            "\(path):\(line): \(reason)"
        }
    }
}
