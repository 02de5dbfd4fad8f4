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
        // Most text needs nothing: one pass over its stored bytes. Walking
        // the scalars was half the daemon's instructions per status, through
        // its log line (callgrind).
        let clean = utf8.withContiguousStorageIfAvailable { ControlCharacters.absent(from: $0) }
        if clean ?? !unicodeScalars.contains(where: \.needsEscaping) { return String(self) }
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
    /// Whether ``StringProtocol/escapingControlCharacters`` writes it escaped.
    package var needsEscaping: Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F: true  // C0, DEL, C1
        case 0x202A...0x202E, 0x2066...0x2069: true  // bidirectional embeddings, overrides, isolates
        case 0x2028, 0x2029: true  // line and paragraph separators
        default: false
        }
    }
}

/// The check ``StringProtocol/escapingControlCharacters`` starts with, on
/// UTF-8 bytes: whether any scalar it escapes is there.
package enum ControlCharacters {
    /// Whether `utf8` (valid UTF-8, as a Swift string's) holds none of the
    /// scalars that are escaped; with `newlines`, a line break is allowed.
    /// Reads the bytes of each escaped range as UTF-8 spells it: C1 is
    /// C2 80–9F; U+2028–202E is E2 80 A8–AE; U+2066–2069 is E2 81 A6–A9.
    package static func absent(from utf8: UnsafeBufferPointer<UInt8>, newlines: Bool = false) -> Bool {
        guard let base = utf8.baseAddress else { return true }
        var index = 0
        while index < utf8.count {
            // Eight printable ASCII bytes at a time, as nearly all text is:
            // a byte at a time, the daemon's log line was scanned four times
            // at about 8 instructions a byte (callgrind). Eight bytes that
            // are not all printable ASCII (newlines, other scripts) are
            // looked at one by one, before the next eight are tried whole.
            if utf8.count - index >= 8,
                isPrintableASCII(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            {
                index += 8
                continue
            }
            let end = min(index + 8, utf8.count)
            while index < end {
                switch utf8[index] {
                case 0x20..<0x7F:
                    break
                case UInt8(ascii: "\n") where newlines:
                    break
                case 0x00..<0x20, 0x7F:
                    return false
                case 0xC2:
                    if index + 1 < utf8.count, (0x80...0x9F).contains(utf8[index + 1]) { return false }
                case 0xE2:
                    if index + 2 < utf8.count {
                        let (second, third) = (utf8[index + 1], utf8[index + 2])
                        if second == 0x80, (0xA8...0xAE).contains(third) { return false }
                        if second == 0x81, (0xA6...0xA9).contains(third) { return false }
                    }
                default:
                    break
                }
                index += 1
            }
        }
        return true
    }

    /// Whether every byte of `word` is printable ASCII, 0x20 to 0x7E: no
    /// high bit, none below 0x20, none 0x7F (the tests for a byte below a
    /// bound of Bit Twiddling Hacks, exact once no high bit is set).
    private static func isPrintableASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        guard word & highBits == 0 else { return false }
        let below20 = (word &- ones &* 0x20) & ~word & highBits
        let deletes = word ^ (ones &* 0x7F)
        let is7F = (deletes &- ones) & ~deletes & highBits
        return below20 | is7F == 0
    }
}
