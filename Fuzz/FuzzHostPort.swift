import Reachability

/// The one grammar of a host and a port, through every reader of it: a
/// command-line target, the connectivity check's URL (from reachd.conf or a
/// flag) and a portal's URL (from whoever runs the Wi-Fi). Beyond not
/// trapping: a destination's description parses back to it, a check URL that
/// is accepted gives a request line with nothing injected, and a portal URL
/// that is accepted is accepted again as it is.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHostPort(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    for grammar in [HostPort.Grammar.target, .url] {
        if let parsed = try? HostPort(parsing: text[...], as: grammar) {
            require(!parsed.host.isEmpty, "an empty host from \(text)")
            require(parsed.port.map { (1...65535).contains($0) } ?? true, "port \(parsed.port!) from \(text)")
        }
    }
    if let destination = try? Destination(parsing: text) {
        require((try? Destination(parsing: destination.description)) == destination, "\(destination) does not parse back")
    }
    if let (host, port, path) = try? ConnectivityCheck.target(of: text) {
        require(!host.isEmpty && (1...65535).contains(port) && path.hasPrefix("/"), "\(host) \(port) \(path) from \(text)")
        // What the request line and the Host header are written with: nothing
        // a server could read as the end of a field.
        require((host + path).unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) }, "\(host) \(path) in a request")
    }
    if let url = PortalURL.validated(text) {
        require(url.utf8.count <= PortalURL.maximumLength, "a portal URL of \(url.utf8.count) bytes")
        require(PortalURL.validated(url) == url, "\(url) is not accepted again as it is")
    }
    return 0
}
