/// Which network namespace a status describes: the daemon's, named so that a
/// client can tell a daemon of another network (one whose socket path
/// reaches it through a shared filesystem: `ip netns exec`, `unshare -n`,
/// systemd's `PrivateNetwork=yes`) from its own. `netns` on the wire.
///
/// ```swift
/// let status = try await ReachabilityMonitor.currentStatus()
/// if let network = status.network { print("namespace inode \(network.inode)") }
/// ```
public struct NetworkNamespace: Codable, Sendable, Hashable {
    /// The inode of `/proc/self/ns/net`, as `ls -iL /proc/self/ns/net` shows it.
    public var inode: UInt64
    /// The device of that file (the kernel's nsfs).
    public var device: UInt64
    /// `SO_NETNS_COOKIE` of a socket in the namespace, where the kernel has it
    /// (Linux 5.14): unlike an inode, never used again for another namespace.
    public var cookie: UInt64?

    /// A namespace as the kernel names it.
    public init(inode: UInt64, device: UInt64, cookie: UInt64?) {
        self.inode = inode
        self.device = device
        self.cookie = cookie
    }
}
