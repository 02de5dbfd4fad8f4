/// The links and addresses the kernel has reported: small (tens of entries on
/// any host), so kept in full, unlike routes, which are never mirrored.
///
/// A pure reducer: `apply` folds one decoded netlink event into the table.
struct InterfaceTable: Sendable, Equatable {
    private(set) var links: [Int: LinkRecord] = [:]
    private(set) var addresses: [AddressKey: AddressRecord] = [:]

    init() {}

    init(replaying events: [NetlinkEvent]) {
        for event in events { apply(event) }
    }

    /// Applies one event. Returns whether the event can change the answer, so
    /// that a batch of only ignored messages causes no route lookups.
    @discardableResult
    mutating func apply(_ event: NetlinkEvent) -> Bool {
        switch event {
        case .linkChanged(let link):
            links[link.index] = link
            return true
        case .linkRemoved(let index):
            links[index] = nil
            addresses = addresses.filter { $0.key.interfaceIndex != index }
            return true
        case .addressChanged(let address):
            addresses[address.key] = address
            return true
        case .addressRemoved(let address):
            addresses[address.key] = nil
            return true
        case .routesChanged, .routeRemoved, .rulesChanged:
            return true
        case .ignored:
            return false
        }
    }

    /// Addresses that count: never those of the loopback interface.
    func countedAddresses(of family: AddressFamily) -> some Sequence<AddressRecord> {
        addresses.values.lazy.filter { address in
            address.family == family && links[address.interfaceIndex]?.isLoopback != true
        }
    }

    func addresses(ofLink index: Int) -> [AddressRecord] {
        addresses.values.filter { $0.interfaceIndex == index }
    }
}
