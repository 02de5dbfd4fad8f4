/// The netlink decoder, events, neighbours and route-lookup answers alike: datagrams the
/// kernel never sends (its own are in the seed corpus).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNetlinkDecoder(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    // A copy aligned as the kernel's datagrams are: libnl reads headers in place.
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
    defer { buffer.deallocate() }
    buffer.copyMemory(from: UnsafeRawBufferPointer(start: start, count: count))
    let bytes = UnsafeRawBufferPointer(buffer)
    _ = NetlinkDecoder.events(in: bytes)
    NetlinkFrame.forEach(in: bytes) { frame in
        _ = NetlinkDecoder.neighbour(in: frame)
        let result = NetlinkDecoder.routeLookupResult(for: frame)
        if case .failed(.other(let errno))? = result { require(errno >= 0, "a negative errno: \(errno)") }
    }
    return 0
}
