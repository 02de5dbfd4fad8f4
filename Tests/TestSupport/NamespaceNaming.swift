import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// What a fake daemon's status lines say of their network, as every daemon
/// since 0.7 does and clients require: the connecting client's own
/// namespace, read off the accepted socket (the kernel makes it in the
/// namespace of the socket that connected), as a cookie. A line that names
/// one already, or that is no status, is left as it is.
package enum NamespaceNaming {
    /// `lines` (one or several, newline-separated) with each status that
    /// names no namespace naming `client`'s.
    /// Worked on bytes: a fake daemon names its lines on every connection,
    /// and one test's line is 70 KB, which a search by Characters in a
    /// debug build made slower than the 250 ms a GLib app gives a daemon.
    package static func naming(_ lines: String, namespaceOf client: Int32) -> String {
        guard let cookie = NetworkNamespace.cookie(of: client) else { return lines }
        let named = Array(#""netns":{"cookie":\#(cookie),"device":0,"inode":0}"#.utf8)
        let status = Array(#""type":"status""#.utf8)
        let unnamed = Array(#""netns":null"#.utf8)
        let key = Array(#""netns""#.utf8)
        var out: [UInt8] = []
        for (position, line) in Array(lines.utf8).split(separator: 10, omittingEmptySubsequences: false).enumerated() {
            if position > 0 { out.append(10) }
            guard line.first == UInt8(ascii: "{"), line.firstRange(ofBytes: status) != nil else {
                out += line
                continue
            }
            if let null = line.firstRange(ofBytes: unnamed) {
                // A status encoded from a value with no namespace says `null`.
                out += line[..<null.lowerBound] + named + line[null.upperBound...]
            } else if line.firstRange(ofBytes: key) == nil {
                out += [UInt8(ascii: "{")] + named + [UInt8(ascii: ",")] + line.dropFirst()
            } else {
                out += line
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `lines` as a fake daemon sends them to a client of this thread's
    /// namespace: what a test that compares bytes expects.
    package static func namingThisNamespace(_ lines: String) -> String {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        return naming(lines, namespaceOf: socket)
    }
}
