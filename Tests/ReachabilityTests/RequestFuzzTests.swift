import Testing
import TestSupport
@testable import Reachability

/// The daemon parses whatever any local user sends. Seeded random input, so a
/// failure names a case that reproduces: the parser and the framing never
/// crash, never accept what is not a request, and never hold more than a line.
@Suite("Fuzzing the request parser and the line framing")
struct RequestFuzzTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func theParserAnswersEveryLineWithARequestOrAReason(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var accepted = 0
        for _ in 0..<2_500 {
            let line = generator.bytes( maxLength: 64)
            switch ClientRequest.parse(line) {
            case .success(let request):
                accepted += 1
                // Only a JSON object whose "op" is a known request gets here.
                let text = String(decoding: line, as: UTF8.self)
                #expect(text.contains(request.operation.rawValue), "accepted \(text.debugDescription) as \(request)")
            case .failure(let error):
                #expect(!error.message.isEmpty)
                #expect(error.message.contains("request") || error.message.contains("op"), "\(error.message)")
            }
        }
        #expect(accepted > 0, "the generator produces valid requests too, or the test proves little")
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func framingMatchesSplittingTheWholeStreamWhateverTheChunks(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<400 {
            let limit = Int.random(in: 1...64, using: &generator)
            let stream = generator.bytes( maxLength: 600)
            var buffer = LineBuffer(limit: limit)
            var lines: [[UInt8]] = []
            var failed = false
            var offset = 0
            while offset < stream.count, !failed {
                let size = Int.random(in: 1...50, using: &generator)
                let chunk = stream[offset..<min(offset + size, stream.count)]
                offset += chunk.count
                do { lines += try buffer.append(chunk) } catch { failed = true }
            }
            // The reference: split the whole stream at once. A line is too long
            // when more than `limit` bytes precede its newline (a `\r` counts:
            // it is only known to end the line when the newline comes).
            var expected = stream.split(separator: 10, omittingEmptySubsequences: false).map { Array($0) }
            let unterminated = expected.removeLast()
            let tooLong = expected.contains { $0.count > limit } || unterminated.count > limit
            #expect(failed == tooLong, "limit \(limit): refused \(failed), a line too long \(tooLong)")
            guard !failed else { continue }
            func strip(_ line: [UInt8]) -> [UInt8] { line.last == 13 ? Array(line.dropLast()) : line }
            #expect(lines == expected.map(strip))
            var finished = buffer
            #expect(finished.finish() == (unterminated.isEmpty ? nil : strip(unterminated)))
            #expect(finished.finish() == nil, "a partial line is handed over once")
        }
    }
}
