#if canImport(Glibc)
import Glibc
#endif

/// The host's interface names, for shell completion of `--interface`.
enum NetworkInterfaces {
    static func names() -> [String] {
        guard let directory = opendir("/sys/class/net") else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }
}
