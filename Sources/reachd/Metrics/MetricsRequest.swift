import Reachability

/// What a scrape may ask of the metrics listener, and what it is answered:
/// `GET` or `HEAD` of `/metrics`, one request per connection, a head of at
/// most ``maxHead`` bytes, and a `Host` that names this host (DNS
/// rebinding: a web page whose name now points at 127.0.0.1 must not read
/// the metrics). Bytes in, bytes out, no I/O: the parser the fuzzer runs.
enum MetricsRequest {
    static let maxHead = 8192

    /// The response to a whole request, or `nil` while more may come: a
    /// head over ``maxHead`` bytes is refused. For tests and the fuzzer; the
    /// listener scans as bytes arrive.
    static func answer(to request: [UInt8], hosts: Set<String> = ["localhost"], exposition: () -> [UInt8]) -> [UInt8]? {
        guard let end = headEnd(request, from: 0) else { return request.count >= maxHead ? headTooLong : nil }
        return answer(toHead: request[..<end], hosts: hosts, exposition: exposition)
    }

    /// The answer to a head that reached ``maxHead`` bytes without ending.
    static let headTooLong = response(431, "the request head is over \(maxHead) bytes\n")

    /// The response to a complete request head.
    static func answer(toHead requestHead: ArraySlice<UInt8>, hosts: Set<String>, exposition: () -> [UInt8]) -> [UInt8] {
        // Lines end in CRLF or LF alone.
        let lines = requestHead.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0
        }
        let parts = lines[0].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].starts(with: Array("HTTP/1.".utf8)) else {
            return response(400, "a request line is METHOD PATH HTTP/1.x\n")
        }
        let hostFields = lines.dropFirst().compactMap { line -> ArraySlice<UInt8>? in
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
                String(decoding: line[..<colon], as: UTF8.self).lowercased() == "host"
            else { return nil }
            return line[(colon + 1)...]
        }
        guard hostFields.count <= 1, !(hostFields.isEmpty && parts[2].elementsEqual("HTTP/1.1".utf8)) else {
            return response(400, "an HTTP/1.1 request has one Host header\n")
        }
        if let host = hostFields.first, !isExpected(host: String(decoding: host, as: UTF8.self), names: hosts) {
            // Not this host's name: a page whose name was rebound to this
            // address. No body, nothing of what is served here.
            return head(421, contentType: nil, length: 0, allow: false)
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        let target = parts[1].split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard method == "GET" || method == "HEAD" else { return response(405, "only GET and HEAD\n", allow: true) }
        guard target.elementsEqual("/metrics".utf8) else { return response(404, "reachd's metrics are at /metrics\n") }
        let body = exposition()
        var answer = head(200, contentType: "text/plain; version=0.0.4; charset=utf-8", length: body.count, allow: false)
        if method == "GET" { answer += body }
        return answer
    }

    /// Whether a `Host` value names this listener: an IP address (a name
    /// can be rebound to one; an address is what the scraper dialled), or
    /// one of `names`, with or without a port.
    static func isExpected(host value: String, names: Set<String>) -> Bool {
        var host = Substring(value).drop { $0 == " " || $0 == "\t" }
        while host.last == " " || host.last == "\t" { host = host.dropLast() }
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && isPort(rest.dropFirst())) else { return false }
            return IPAddress(String(host[host.index(after: host.startIndex)..<close]))?.family == .ipv6
        }
        if let colon = host.lastIndex(of: ":") {
            guard isPort(host[host.index(after: colon)...]) else { return false }
            host = host[..<colon]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        return IPAddress(String(host))?.family == .ipv4 || names.contains(host.lowercased())
    }

    private static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// Where the head ends, after its blank line (CRLF CRLF, or LF LF),
    /// looking from `start` only: what was scanned before held none.
    static func headEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") {
                if bytes[index + 1] == UInt8(ascii: "\n") { return index + 2 }
                if bytes[index + 1] == UInt8(ascii: "\r"), index + 2 < bytes.count, bytes[index + 2] == UInt8(ascii: "\n") {
                    return index + 3
                }
            }
            index += 1
        }
        return nil
    }

    private static func response(_ status: Int, _ text: String, allow: Bool = false) -> [UInt8] {
        head(status, contentType: "text/plain; charset=utf-8", length: text.utf8.count, allow: allow) + Array(text.utf8)
    }

    private static func head(_ status: Int, contentType: String?, length: Int, allow: Bool) -> [UInt8] {
        let reason = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 421: "Misdirected Request",
                      431: "Request Header Fields Too Large"][status] ?? "Error"
        var text = "HTTP/1.1 \(status) \(reason)\r\n"
        if let contentType { text += "Content-Type: \(contentType)\r\n" }
        text += "Content-Length: \(length)\r\nConnection: close\r\n"
        if allow { text += "Allow: GET, HEAD\r\n" }
        return Array((text + "\r\n").utf8)
    }
}
