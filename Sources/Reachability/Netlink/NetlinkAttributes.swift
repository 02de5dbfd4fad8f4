/// The attributes (`struct nlattr`) packed in some bytes of a message, in
/// order, each its type and its payload: the one walk every reader of
/// them takes, on the bytes as received (libnl's would first copy them
/// into an `nl_msg`). It stops at the first attribute that does not fit
/// in the bytes, and says so (``isBroken``): a reader that needs every
/// attribute sound walks it with `while let … = next()` and checks that
/// once it is done.
struct NetlinkAttributes: Sequence, IteratorProtocol {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    /// An attribute's length was shorter than its header, or ran past the bytes.
    private(set) var isBroken = false

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The next attribute: its type less NLA_F_NESTED and NLA_F_NET_BYTEORDER,
    /// and its payload; `nil` at the end, or at one that does not fit.
    mutating func next() -> (type: UInt16, payload: UnsafeRawBufferPointer)? {
        guard !isBroken, offset + 4 <= bytes.count else { return nil }
        let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
        let type = bytes.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self) & 0x3FFF
        guard length >= 4, offset + length <= bytes.count else {
            isBroken = true
            return nil
        }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + length)])
        // Each is padded to four bytes; the last one's padding may be missing.
        offset += (length + 3) & ~3
        return (type, payload)
    }
}
