/// The part of an HTTP/1.x response the connectivity check reads: the status,
/// the headers and the start of the body. Parsed from whatever arrived before
/// the server closed, the limit or the deadline.
struct HTTPResponse: Equatable, Sendable {
    var status: Int
    /// In order, names as sent; look them up with ``header(_:)``.
    var headers: [(name: String, value: String)]
    var bodyPrefix: [UInt8]

    static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.bodyPrefix == rhs.bodyPrefix
            && lhs.headers.map { [$0.name, $0.value] } == rhs.headers.map { [$0.name, $0.value] }
    }

    /// The first header named `name`, case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// `nil` until the status line and every header have arrived.
    init?(parsing bytes: [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.firstRange(ofBytes: separator) else { return nil }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { return nil }
        // "HTTP/1.1 204 No Content"
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]),
            (100...599).contains(status)
        else { return nil }
        self.status = status
        headers = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]).trimmingSpaces(),
                    String(line[line.index(after: colon)...]).trimmingSpaces())
        }
        let body = Array(bytes[end.upperBound...])
        let chunked = headers.contains {
            $0.name.lowercased() == "transfer-encoding" && $0.value.lowercased().contains("chunked")
        }
        bodyPrefix = chunked ? Self.dechunk(body) : body
    }

    init(status: Int, headers: [(name: String, value: String)] = [], bodyPrefix: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.bodyPrefix = bodyPrefix
    }

    /// The data of the chunks that arrived whole (a chunked body starts with
    /// its size line, which must not be mistaken for the text).
    private static func dechunk(_ body: [UInt8]) -> [UInt8] {
        var data: [UInt8] = []
        var rest = body[...]
        while let lineEnd = rest.firstRange(ofBytes: [13, 10]) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingSpaces(), radix: 16), size > 0 else { break }
            let start = lineEnd.upperBound
            let available = min(size, rest.endIndex - start)
            data += rest[start..<start + available]
            guard available == size, rest.endIndex - start >= size + 2 else { break }
            rest = rest[(start + size + 2)...]
        }
        return data
    }
}

extension StringProtocol {
    /// Without spaces and tabs at either end (header fields allow both).
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
