/// One watched question: this destination, for this uid's packets, in
/// these families. What a ``DestinationTracker`` keeps an entry under, and
/// what the daemon's watches and a client's follows name a destination by.
package struct DestinationKey: Hashable, Sendable {
    package var destination: Destination
    /// Whose routing (RTA_UID); `nil`: this process's own.
    package var uid: UInt32?
    /// Only this family's addresses; `nil`: both.
    package var family: AddressFamily?

    package init(_ destination: Destination, uid: UInt32?, family: AddressFamily?) {
        self.destination = destination
        self.uid = uid
        self.family = family
    }
}
