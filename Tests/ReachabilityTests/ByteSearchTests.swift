import Testing
import TestSupport
@testable import Reachability

/// The byte search behind every marker found in a daemon's line and in a
/// check server's answer: what the standard library's `firstRange(of:)`
/// finds, at a fraction of its cost (see `firstRange(ofBytes:)`).
@Suite("Byte search")
struct ByteSearchTests {
    @Test func findsWhatTheStandardLibraryFinds() {
        var generator = SeededGenerator(seed: 35)
        for _ in 0..<2_000 {
            // Two letters only, so that near misses are common.
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 97...98, using: &generator) }
            let marker = (0..<Int.random(in: 1...4, using: &generator)).map { _ in UInt8.random(in: 97...98, using: &generator) }
            #expect(bytes.firstRange(ofBytes: marker) == bytes.firstRange(of: marker), "\(bytes) \(marker)")
            let slice = bytes.dropFirst(bytes.count / 3)
            #expect(slice.firstRange(ofBytes: marker) == slice.firstRange(of: marker), "a slice's own indices")
        }
    }

    @Test func edges() {
        let line = Array(#"{"seq":7,"type":"status"}"#.utf8)
        #expect(line.firstRange(ofBytes: Array(#""type":"status""#.utf8)) == 9..<24)
        #expect(line.firstRange(ofBytes: line) == 0..<line.count, "the whole line")
        #expect(line.firstRange(ofBytes: line + [0]) == nil, "longer than the line")
        #expect(line.firstRange(ofBytes: []) == nil, "an empty marker names nothing")
        #expect([UInt8]().firstRange(ofBytes: [1]) == nil)
    }
}
