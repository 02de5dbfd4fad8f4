extension StringProtocol {
    /// The text with every character that could steer a terminal or forge a
    /// log line written visibly instead, as systemd's `cescape` writes them:
    /// `\n`, `\r` and `\t`, and `\xNN` for each UTF-8 byte of the other C0
    /// controls, DEL and the C1 controls (an 8-bit CSI is as good as ESC `[`
    /// to many terminals). Bidirectional overrides and isolates, and the
    /// Unicode line and paragraph separators, become `\u{NNNN}`: they reorder
    /// or break what the reader sees.
    ///
    /// Applied to every string from outside the process (a portal's headers,
    /// interface names, configuration values, a client's or daemon's bytes)
    /// before it reaches a terminal or the log. A backslash is left as it is,
    /// unlike `cescape`: escaping is then idempotent, so a field escaped where
    /// it is quoted passes a sink that escapes again unchanged. For example
    /// `http://x/` ESC `[31mred` becomes `http://x/\x1b[31mred`.
    package var escapingControlCharacters: String {
        // Most text is printable ASCII, which needs nothing: one pass over
        // its stored bytes. Walking the scalars (or the bytes through this
        // generic view) was half the daemon's instructions per status,
        // through its log line (callgrind).
        let printable = utf8.withContiguousStorageIfAvailable { $0.allSatisfy { (0x20..<0x7F).contains($0) } }
        if printable == true || !unicodeScalars.contains(where: \.needsEscaping) { return String(self) }
        var escaped = ""
        for scalar in unicodeScalars {
            guard scalar.needsEscaping else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value > 0x9F:
                escaped += "\\u{" + String(scalar.value, radix: 16) + "}"
            case _:
                for byte in String(scalar).utf8 {
                    escaped += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
                }
            }
        }
        return escaped
    }
}

extension Unicode.Scalar {
    fileprivate var needsEscaping: Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F: true  // C0, DEL, C1
        case 0x202A...0x202E, 0x2066...0x2069: true  // bidirectional embeddings, overrides, isolates
        case 0x2028, 0x2029: true  // line and paragraph separators
        default: false
        }
    }
}
