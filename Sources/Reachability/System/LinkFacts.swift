#if canImport(Glibc)
import Glibc
#endif

/// What sysfs says of a link that netlink does not: its device type (`wwan`)
/// and its driver. Read once per link, never per route event.
enum LinkFacts {
    static func read(interface name: String) -> (deviceType: String?, driver: String?) {
        guard !name.contains("/") else { return (nil, nil) }
        let base = "/sys/class/net/\(name)"
        var deviceType: String?
        if let uevent = SmallFile.read(base + "/uevent", limit: 4096) {
            for line in uevent.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
                deviceType = String(line.dropFirst("DEVTYPE=".count))
            }
        }
        var target = [CChar](repeating: 0, count: 512)
        let length = readlink(base + "/device/driver", &target, target.count - 1)
        let driver = length > 0
            ? String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: "/").last.map(String.init)
            : nil
        return (deviceType, driver)
    }
}
