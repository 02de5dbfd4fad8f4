import Foundation
@testable import Reachability

/// A recorded netlink session from Fixtures/ (see record.py there): datagrams
/// as the kernel sent them, grouped by the command that caused them.
struct NetlinkFixture {
    struct Step {
        let description: String
        let datagrams: [[UInt8]]

        var events: [NetlinkEvent] {
            datagrams.flatMap { bytes in bytes.withUnsafeBytes { NetlinkDecoder.events(in: $0) } }
        }
    }

    let steps: [Step]

    init(_ name: String) throws {
        guard let url = Bundle.module.url(forResource: name, withExtension: "netlink", subdirectory: "Fixtures")
        else { throw FixtureError.missing(name) }
        var steps: [Step] = []
        var description: String?
        var datagrams: [[UInt8]] = []
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            if line.hasPrefix("# step: ") {
                if let description { steps.append(Step(description: description, datagrams: datagrams)) }
                description = String(line.dropFirst("# step: ".count))
                datagrams = []
            } else if line.hasPrefix("netlink ") {
                datagrams.append(try Self.bytes(fromHex: line.dropFirst("netlink ".count)))
            }
        }
        if let description { steps.append(Step(description: description, datagrams: datagrams)) }
        self.steps = steps
    }

    func step(_ description: String) throws -> Step {
        guard let step = steps.first(where: { $0.description.hasPrefix(description) }) else {
            throw FixtureError.noStep(description)
        }
        return step
    }

    private static func bytes(fromHex hex: Substring) throws -> [UInt8] {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { throw FixtureError.badHex }
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)
            else { throw FixtureError.badHex }
            return byte
        }
    }

    enum FixtureError: Error {
        case missing(String)
        case noStep(String)
        case badHex
    }
}
