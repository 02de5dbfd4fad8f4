#if canImport(Glibc)
import Glibc
#endif
import Reachability
import Synchronization

/// What one `ReachabilityMonitor` following the status and N destinations
/// costs this process: threads and descriptors before the monitor, and once
/// every destination has its answer. One JSON line on stdout. The callback
/// API only, so that no concurrency runtime starts threads of its own.
///
/// Usage: MonitorCost DESTINATIONS automatic|daemon|embedded [SOCKET]
@main
enum MonitorCost {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, let count = Int(arguments[1]), count > 0,
            let source = ["automatic": ReachabilityMonitor.Source.automatic, "daemon": .daemon, "embedded": .inProcess][arguments[2]]
        else {
            fail("usage: MonitorCost DESTINATIONS automatic|daemon|embedded [SOCKET]")
        }
        let before = (threads: entries("/proc/self/task"), descriptors: entries("/proc/self/fd"))
        let monitor = ReachabilityMonitor(source: source, socketPath: arguments.count > 3 ? arguments[3] : nil)
        let seen = Mutex((status: false, answers: [String: StatusSource]()))
        let status = monitor.onChange { _ in seen.withLock { $0.status = true } }
        // Literals, each its own destination: no resolver threads come and go.
        let subscriptions = (0..<count).map { index in
            let destination = try! Destination(host: "192.0.2.\(index % 250 + 1)", port: 1000 + index)
            return monitor.onChange(of: destination) { answer in
                seen.withLock { $0.answers[answer.target] = answer.source }
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while seen.withLock({ !$0.status || $0.answers.count < count }), ContinuousClock.now < deadline {
            usleep(10_000)
        }
        // What is still starting (a probe, a lookup) settles.
        usleep(300_000)
        let after = (threads: entries("/proc/self/task"), descriptors: entries("/proc/self/fd"))
        let answers = seen.withLock { $0.answers }
        let sources = Dictionary(grouping: answers.values, by: \.rawValue).mapValues(\.count)
        print("""
            {"destinations":\(count),"source":"\(arguments[2])","answered":\(answers.count),\
            "answers_from":{\(sources.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ","))},\
            "threads":{"before":\(before.threads),"after":\(after.threads)},\
            "descriptors":{"before":\(before.descriptors),"after":\(after.descriptors)}}
            """)
        for subscription in subscriptions { subscription.cancel() }
        status.cancel()
        monitor.cancel()
    }

    /// Entries in a /proc directory, less `.` and `..` (and, for
    /// /proc/self/fd, the one `opendir` holds while reading it).
    static func entries(_ path: String) -> Int {
        guard let directory = opendir(path) else { fail("cannot read \(path)") }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { count += 1 }
        }
        return path.hasSuffix("/fd") ? count - 1 : count
    }

    static func fail(_ message: String) -> Never {
        let bytes = Array("MonitorCost: \(message)\n".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(2)
    }
}
