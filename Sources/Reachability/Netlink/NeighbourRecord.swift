/// A neighbour entry as RTM_NEWNEIGH describes it: the kernel's word on
/// whether a next hop answers address resolution (ARP, or IPv6 neighbour
/// discovery) on a link.
package struct NeighbourRecord: Sendable, Hashable {
    /// What the kernel found of the neighbour, as far as reachd acts on it.
    package enum State: Sendable, Hashable {
        /// NUD_FAILED: it answered none of the kernel's probes; packets to it are dropped.
        case failed
        /// NUD_REACHABLE: it answered, or traffic confirmed it, just now.
        case reachable
        /// Any other state (stale, delay, probe, incomplete, permanent, ...).
        case other
    }

    package var interfaceIndex: Int
    package var address: IPAddress
    package var state: State

    package init(interfaceIndex: Int, address: IPAddress, state: State) {
        self.interfaceIndex = interfaceIndex
        self.address = address
        self.state = state
    }
}
