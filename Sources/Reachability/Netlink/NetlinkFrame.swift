#if canImport(Glibc)
import Glibc
#endif

/// One netlink message inside a received datagram: the fixed `nlmsghdr` fields
/// and the whole message's bytes. Iterating these is plain byte arithmetic, so it
/// is done here rather than through libnl's allocating `nl_msg`.
struct NetlinkFrame {
    static let headerLength = 16

    let type: UInt16
    let flags: UInt16
    let sequence: UInt32
    /// The message, header included.
    let bytes: UnsafeRawBufferPointer

    /// NLMSG_ERROR, NLMSG_DONE and friends are below 16; rtnetlink types start there.
    static let error: UInt16 = 2
    static let done: UInt16 = 3
    static let dumpInterruptedFlag: UInt16 = 0x10

    var isDumpInterrupted: Bool { flags & Self.dumpInterruptedFlag != 0 }

    /// For NLMSG_ERROR: the errno the kernel reports (0 is an acknowledgement).
    /// The kernel sends a negated errno; a code it never sends (positive, or
    /// below -4095, `INT32_MIN` among them, whose negation traps) is EPROTO.
    var errorNumber: Int32 {
        guard bytes.count >= Self.headerLength + 4 else { return EPROTO }
        let code = bytes.loadUnaligned(fromByteOffset: Self.headerLength, as: Int32.self)
        return (-4095...0).contains(code) ? -code : EPROTO
    }

    /// Calls `body` for each well-formed message in `buffer`, stopping at the first
    /// malformed length (the kernel never sends one; a corrupt fixture might).
    static func forEach(
        in buffer: UnsafeRawBufferPointer, _ body: (NetlinkFrame) throws -> Void
    ) rethrows {
        var offset = 0
        while offset + headerLength <= buffer.count {
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            guard length >= headerLength, offset + length <= buffer.count else { return }
            let frame = NetlinkFrame(
                type: buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self),
                flags: buffer.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self),
                sequence: buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self),
                bytes: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]))
            try body(frame)
            offset += (length + 3) & ~3
        }
    }
}
