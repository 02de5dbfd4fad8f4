/// The metrics listener's request parser: whatever a scraper sends, Prometheus
/// or a web page's rebound name. Beyond not trapping: every answer is one of
/// the listener's, a 421 carries nothing, and scanning the head as the bytes
/// arrive (from where the last read left off) finds the end a whole scan does.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetricsRequest(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let whole = MetricsRequest.headEnd(bytes, from: 0)
    // The bytes in two reads, split where the first byte says.
    let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    let firstRead = Array(bytes[..<split])
    if let early = MetricsRequest.headEnd(firstRead, from: 0) {
        require(early == whole, "the first read ends the head at \(early), the whole at \(String(describing: whole))")
    } else {
        let resumed = MetricsRequest.headEnd(bytes, from: max(0, split - 3))
        require(resumed == whole, "resumed at \(max(0, split - 3)): \(String(describing: resumed)), whole: \(String(describing: whole))")
    }
    guard let answer = MetricsRequest.answer(to: bytes, exposition: { Array("reachd_online 1\n".utf8) }) else { return 0 }
    let text = String(decoding: answer, as: UTF8.self)
    let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
    require(text.hasPrefix("HTTP/1.1 ") && [200, 400, 404, 405, 421, 431].contains(status ?? 0), "answered \(text.prefix(40))")
    if status == 421 {
        require(text == "HTTP/1.1 421 Misdirected Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", "a 421 with more: \(text)")
    }
    return 0
}
