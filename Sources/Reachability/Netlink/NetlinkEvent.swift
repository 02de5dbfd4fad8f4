/// What one rtnetlink message means to reachd, decoded at the C boundary into
/// plain values so that everything after it is testable without a socket.
enum NetlinkEvent: Sendable, Hashable {
    /// RTM_NEWLINK: a link appeared or changed (flags, carrier, name, ...).
    case linkChanged(LinkRecord)
    /// RTM_DELLINK: the link is gone, and its addresses with it.
    case linkRemoved(index: Int)
    /// RTM_NEWADDR: an address appeared or changed (flags such as tentative).
    case addressChanged(AddressRecord)
    /// RTM_DELADDR.
    case addressRemoved(AddressRecord)
    /// RTM_NEWROUTE: the prefix it names, and nothing else.
    /// reachd never mirrors the routing table; it asks the kernel again for
    /// the addresses within the prefix. `nil`: a route whose prefix could
    /// not be read (a family reachd does not know), which may move anything.
    case routesChanged(RoutePrefix?)
    /// RTM_DELROUTE, as ``routesChanged(_:)``, with what a lookup the route
    /// answered would name (``RemovedRoute``).
    case routeRemoved(RemovedRoute?)
    /// RTM_NEWRULE or RTM_DELRULE: policy routing changed; same treatment as routes.
    case rulesChanged
    /// A message reachd does not act on (bridge port notifications, newer types).
    case ignored(type: UInt16)
}

/// A link as RTM_NEWLINK describes it.
struct LinkRecord: Sendable, Hashable {
    var index: Int
    var name: String
    var isUp: Bool
    var hasCarrier: Bool
    var isLoopback: Bool
    var operationalState: OperationalState
    /// ARPHRD_* (1 Ethernet, 512 PPP, 65534 none: tunnels, raw-IP modems).
    var hardwareType: UInt32 = 1
    /// IFLA_INFO_KIND for links made through rtnetlink (`veth`, `wireguard`,
    /// `wwan`); `nil` for most hardware.
    var kind: String? = nil
}

/// An address as RTM_NEWADDR describes it.
struct AddressRecord: Sendable, Hashable {
    var interfaceIndex: Int
    var address: IPAddress
    var prefixLength: Int
    var scope: AddressScope
    var isTentative: Bool
    var isDADFailed: Bool

    /// What identifies an address to the kernel: RTM_DELADDR names it by these.
    var key: AddressKey {
        AddressKey(interfaceIndex: interfaceIndex, address: address, prefixLength: prefixLength)
    }

    var family: AddressFamily { address.family }

    var isUsable: Bool { !isTentative && !isDADFailed }
}

struct AddressKey: Sendable, Hashable {
    var interfaceIndex: Int
    var address: IPAddress
    var prefixLength: Int
}
