import Reachability

/// reachd.conf's parser: whatever an administrator (or a package) wrote.
/// Beyond not trapping: every value the parser accepts converts, in range.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigurationFile(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    guard let file = try? ConfigurationFile(path: "reachd.conf", text: text) else { return 0 }
    for (key, range) in [("timeout", SecondsRange.checkTimeout), ("interval", SecondsRange.checkInterval)] {
        if let duration = try? file.duration("connectivity", key, in: range) {
            require(duration >= .milliseconds(Int64(range.lowest * 1000)) && duration <= .seconds(range.highest), "\(key) = \(duration) out of range")
        }
    }
    _ = try? file.bool("connectivity", "enabled")
    for name in file.keys(in: "metered") { _ = try? file.bool("metered", name) }
    return 0
}
