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
    package static func naming(_ lines: String, namespaceOf client: Int32) -> String {
        guard let cookie = NetworkNamespace.cookie(of: client) else { return lines }
        let named = #""netns":{"cookie":\#(cookie),"device":0,"inode":0}"#
        return lines.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.hasPrefix("{"), line.contains(#""type":"status""#) else { return String(line) }
            // A status encoded from a value with no namespace says `null`.
            if line.contains(#""netns":null"#) { return line.replacingOccurrences(of: #""netns":null"#, with: named) }
            guard !line.contains(#""netns""#) else { return String(line) }
            return "{" + named + "," + line.dropFirst()
        }.joined(separator: "\n")
    }

    /// `lines` as a fake daemon sends them to a client of this thread's
    /// namespace: what a test that compares bytes expects.
    package static func namingThisNamespace(_ lines: String) -> String {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        return naming(lines, namespaceOf: socket)
    }
}
