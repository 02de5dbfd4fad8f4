/// SplitMix64: tiny, seedable, good enough to vary inputs reproducibly, so a
/// fuzz failure names a seed that brings it back.
package struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Fragments of requests that make near-misses likelier than noise does.
    static let fragments: [[UInt8]] = [
        #"{"op":"get"}"#, #"{"op":"subscribe"}"#, #"{"op":"#, #""get""#, "{", "}", "[", "]", ",", ":", #"""#,
        "\\", "\\u0000", "null", "true", "1e999", "-0", " ", "\t", "\r", "\n", "op", #"{"op":null}"#, "\u{FEFF}",
    ].map { Array($0.utf8) } + [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0x00], [0xf0, 0x9f, 0x98, 0x80]]

    /// Up to `maxLength` bytes (a little more when a fragment ends the run) of
    /// request fragments and noise.
    package mutating func bytes(maxLength: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        let target = Int.random(in: 0...maxLength, using: &self)
        while bytes.count < target {
            if Bool.random(using: &self) {
                bytes += Self.fragments.randomElement(using: &self)!
            } else {
                bytes.append(UInt8.random(in: 0...255, using: &self))
            }
        }
        return bytes
    }
}
