extension NameServer {
    /// The index of the link its zone names in `links`, by name or by
    /// number; `nil` unscoped. A zone that names no link has index 0,
    /// which no link has, as glibc's `if_nametoindex` says. Here, not
    /// beside the type: the interface table is the monitor's.
    func linkIndex(in links: [Int: LinkRecord]) -> Int? {
        guard let zone else { return nil }
        if let index = Int(zone) { return index }
        return links.values.first { $0.name == zone }?.index ?? 0
    }
}
