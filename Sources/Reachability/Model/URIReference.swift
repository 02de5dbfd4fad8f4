/// A URI reference split as RFC 3986 appendix B splits it, with what a URI
/// may not hold percent-encoded: the one URL splitter, for a portal's
/// `Location` (``PortalURL``) and the connectivity check's URL alike. The
/// authority's host and port are ``HostPort``'s to read.
///
/// Written by hand: the resolution is RFC 3986's own algorithm (section 5.2)
/// and is tested with the RFC's examples, where Foundation's `URL` resolves
/// as CFURL did and rewrites what it parses.
package struct URIReference {
    package var scheme: String?
    package var authority: String?
    package var path: String
    package var query: String?
    package var fragment: String?

    /// `nil` for a reference with a control character: there is no
    /// reading of it that a browser and reachd would agree on.
    package init?(parsing text: String) {
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            return nil
        }
        var rest = Substring(Self.percentEncodingDisallowed(text))
        if let colon = rest.firstIndex(where: { ":/?#".contains($0) }), rest[colon] == ":",
            Self.isScheme(rest[..<colon])
        {
            scheme = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
        }
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if rest.hasPrefix("//") {
            let afterSlashes = rest.dropFirst(2)
            let end = afterSlashes.firstIndex(of: "/") ?? afterSlashes.endIndex
            authority = String(afterSlashes[..<end])
            rest = afterSlashes[end...]
        }
        path = String(rest)
    }

    /// RFC 3986 section 5.2.2, strict: the target of this reference from `base`.
    package func resolved(against base: URIReference) -> URIReference {
        var target = self
        if scheme != nil {
            target.path = Self.removingDotSegments(path)
            return target
        }
        target.scheme = base.scheme
        if authority != nil {
            target.path = Self.removingDotSegments(path)
            return target
        }
        target.authority = base.authority
        if path.isEmpty {
            target.path = base.path
            target.query = query ?? base.query
        } else if path.hasPrefix("/") {
            target.path = Self.removingDotSegments(path)
        } else {
            target.path = Self.removingDotSegments(Self.merge(base, path))
        }
        return target
    }

    /// Section 5.3.
    package var text: String {
        var text = ""
        if let scheme { text += scheme + ":" }
        if let authority { text += "//" + authority }
        text += path
        if let query { text += "?" + query }
        if let fragment { text += "#" + fragment }
        return text
    }

    /// Section 5.2.3.
    private static func merge(_ base: URIReference, _ path: String) -> String {
        if base.authority != nil && base.path.isEmpty { return "/" + path }
        guard let slash = base.path.lastIndex(of: "/") else { return path }
        return base.path[...slash] + path
    }

    /// Section 5.2.4.
    private static func removingDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                // The first segment, with its leading "/" if any, up to the next "/".
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }

    /// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCIILetter else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCIILetter || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) }
    }

    /// Every byte outside RFC 3986's unreserved, reserved and `%` as `%XX`:
    /// spaces, quotes, angle brackets, non-ASCII text.
    private static func percentEncodingDisallowed(_ text: String) -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%".utf8)
        guard !text.utf8.allSatisfy(allowed.contains) else { return text }
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if allowed.contains(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
