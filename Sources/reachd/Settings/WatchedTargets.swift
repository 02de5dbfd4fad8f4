import Reachability

/// `[watch] targets` and `--watch`: destinations the daemon watches itself,
/// as its own uid, for the metrics: a fleet sees "the route to the database
/// is gone" on each host, judged by that host's routing.
enum WatchedTargets {
    /// Each costs a route lookup per address after every routing change,
    /// and a label value in every scrape.
    static let defaultLimit = 32

    /// The targets as written, in order, without repeats.
    static func parse(_ targets: [String], limit: Int) throws(SettingError) -> [Destination] {
        var parsed: [Destination] = []
        for target in targets {
            let destination: Destination
            do { destination = try Destination(target: target) } catch {
                throw SettingError("\(error)")
            }
            if !parsed.contains(destination) { parsed.append(destination) }
        }
        guard parsed.count <= limit else {
            throw SettingError(
                "\(parsed.count) targets, more than the \(limit) allowed; watch fewer, or raise --max-watched-targets")
        }
        return parsed
    }

    /// A line's targets: separated by spaces, tabs or commas.
    static func split(_ line: String) -> [String] {
        line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
    }
}
