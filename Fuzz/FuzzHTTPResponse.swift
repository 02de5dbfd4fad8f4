import Reachability

/// The connectivity check's HTTP parser: whatever a captive portal answers.
/// Beyond not trapping: a parsed status is one HTTP has, and a redirect's
/// Location becomes a URL to publish only within PortalURL's rules.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard let response = HTTPResponse(parsing: bytes) else { return 0 }
    require((100...599).contains(response.status), "status \(response.status)")
    let verdict = ConnectivityVerdict.judge(.answered(response), expecting: .status(204), asked: "http://check.example/generate_204")
    if let url = verdict.portalURL {
        require(url.utf8.count <= PortalURL.maximumLength, "a portal URL of \(url.utf8.count) bytes")
        require(url.hasPrefix("http://") || url.hasPrefix("https://"), "not http(s): \(url)")
        require(!url.unicodeScalars.contains { $0.value < 0x21 || (0x7F...0x9F).contains($0.value) }, "\(url)")
    }
    return 0
}
