/// Which of the kernel's route lookups a batch of netlink events can have
/// moved, so that an evaluation asks again only those: a route decides a
/// lookup only for the addresses its prefix holds (``RoutePrefix``).
///
/// A link, an address or a policy rule can move any lookup (a link going
/// down takes its routes with it without a word), and so can a route whose
/// prefix could not be read.
enum LookupScope: Sendable, Equatable {
    /// Only messages reachd ignores: nothing to ask.
    case nothing
    /// The addresses within these prefixes.
    case within(Set<RoutePrefix>)
    case everything

    init(_ events: some Sequence<NetlinkEvent>) {
        self = .nothing
        for event in events { widen(by: event) }
    }

    mutating func widen(by event: NetlinkEvent) {
        switch event {
        case .ignored:
            return
        case .routesChanged(let prefix?):
            widen(within: prefix)
        case .routeRemoved(let removed?):
            widen(within: removed.prefix)
        case .routesChanged(nil), .routeRemoved(nil), .rulesChanged, .linkChanged, .linkRemoved, .addressChanged,
            .addressRemoved:
            self = .everything
        }
    }

    // The set is taken out of `self` before it grows: while `self` still
    // held it, each insertion copied the whole set, and a batch of 20,000
    // routes (a full table loading) took seconds in a test build.
    private mutating func widen(within prefix: RoutePrefix) {
        switch self {
        case .nothing: self = .within([prefix])
        case .within(var prefixes):
            self = .nothing
            prefixes.insert(prefix)
            self = .within(prefixes)
        case .everything: return
        }
    }

    /// Adds what `other` can have moved: the scope of several batches.
    mutating func formUnion(_ other: LookupScope) {
        switch (self, other) {
        case (_, .nothing), (.everything, _): return
        case (.nothing, _), (_, .everything): self = other
        case (.within(var mine), .within(let theirs)):
            self = .nothing
            mine.formUnion(theirs)
            self = .within(mine)
        }
    }

    /// Whether the kernel's answer for `destination` may have changed.
    func covers(_ destination: IPAddress) -> Bool {
        switch self {
        case .nothing: false
        case .within(let prefixes): prefixes.contains { $0.contains(destination) }
        case .everything: true
        }
    }
}
