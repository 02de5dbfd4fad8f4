#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A line the daemon sends: a status, a destination's answer or an error,
/// each stamped with `"type"` and `"version"`. For apps that read the
/// socket themselves; ``ReachabilityMonitor`` decodes for you.
///
/// ```swift
/// let line = Array(#"{"type":"error","version":1,"code":"too_many_clients","message":"try later"}"#.utf8)
/// if case .error(let code, let message, _) = try DaemonMessage.decode(line) {
///     print(code, message)
/// }
/// ```
public enum DaemonMessage: Sendable, Equatable {
    case status(NetworkStatus)
    /// A destination's answer: to `reach`, or a watch's (with its id).
    case destination(DestinationStatus)
    /// A refusal; `id` names the `reach`, `watch` or `unwatch` request it
    /// answers, when that request had one.
    case error(code: String, message: String, id: String? = nil)
    /// A line of a type this version does not know, from a newer daemon
    /// (which sends one only to a client that asked for it): skip it.
    case unrecognized(type: String)

    /// The encoded message with its trailing newline.
    package func line() -> [UInt8] {
        switch self {
        case .status(let status): StatusLineWriter.line(status)
        case .destination, .error, .unrecognized: lineThroughCodable()
        }
    }

    /// The same bytes through `Codable`: the reference ``StatusLineWriter`` is tested against.
    package func lineThroughCodable() -> [UInt8] {
        Self.jsonLine(Wire(message: self))
    }

    /// One line of the protocol's JSON: sorted keys (the same value always
    /// encodes to the same bytes), slashes as they are, and the newline.
    package static func jsonLine(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding our own value types cannot fail: no floats, no custom throws.
        return Array(try! encoder.encode(value)) + [UInt8(ascii: "\n")]
    }

    /// Decodes one line (without its newline). Unknown keys are ignored, as the
    /// protocol asks of clients.
    public static func decode(_ line: some Collection<UInt8>) throws(ProtocolError) -> DaemonMessage {
        do {
            return try JSONDecoder().decode(DecodedLine.self, from: Data(line)).message
        } catch DecodedLine.Fault.version(let received) {
            throw .versionMismatch(received: received)
        } catch DecodedLine.Fault.payload(let type, let underlying) {
            throw .malformed("\(type) message does not decode (\(underlying)): \(preview(line))")
        } catch {
            throw .malformed("expected a JSON object with \"type\" and \"version\", got: \(preview(line))")
        }
    }

    private static func preview(_ line: some Collection<UInt8>) -> String {
        let text = String(decoding: line.prefix(200), as: UTF8.self).escapingControlCharacters
        return line.count > 200 ? text + "..." : text
    }

    /// The wire shape: `type` and `version` first, then the payload's own keys.
    private struct Wire: Encodable {
        let message: DaemonMessage

        enum Keys: String, CodingKey { case type, version, code, message, id }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            switch message {
            case .status(let status):
                try container.encode("status", forKey: .type)
                try container.encode(ProtocolVersion.current, forKey: .version)
                try status.encode(to: encoder)
            case .destination(let status):
                try container.encode("destination", forKey: .type)
                try container.encode(ProtocolVersion.current, forKey: .version)
                try status.encode(to: encoder)
            case .error(let code, let text, let id):
                try container.encode("error", forKey: .type)
                try container.encode(ProtocolVersion.current, forKey: .version)
                try container.encode(code, forKey: .code)
                try container.encode(text, forKey: .message)
                // Without an id, the key is left out.
                try container.encodeIfPresent(id, forKey: .id)
            case .unrecognized(let type):
                try container.encode(type, forKey: .type)
                try container.encode(ProtocolVersion.current, forKey: .version)
            }
        }
    }
}

/// A daemon message this client cannot use.
public enum ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The daemon speaks another protocol version: upgrade the older side.
    case versionMismatch(received: Int)
    case malformed(String)

    public var description: String {
        switch self {
        case .versionMismatch(let received):
            "the daemon speaks protocol version \(received), this client speaks \(ProtocolVersion.current); "
                + "install matching versions of reachd and the client"
        case .malformed(let detail):
            "the daemon sent a message this client cannot read: \(detail)"
        }
    }
}

/// A line in one pass of the decoder: the envelope's keys, then the payload
/// from the same decoder. Decoding the envelope and then the payload each
/// from the bytes parsed every status twice, and a client decodes every
/// status it follows.
private struct DecodedLine: Decodable {
    let message: DaemonMessage

    /// What went wrong, for ``DaemonMessage/decode(_:)`` to say; any other
    /// error is a line that is no JSON object with a type and a version.
    enum Fault: Error {
        case version(Int)
        case payload(type: String, underlying: any Error)
    }

    init(from decoder: any Decoder) throws {
        let envelope = try MessageEnvelope(from: decoder)
        guard envelope.version == ProtocolVersion.current else { throw Fault.version(envelope.version) }
        do {
            switch envelope.type {
            case "status": message = .status(try NetworkStatus(from: decoder))
            case "destination": message = .destination(try DestinationStatus(from: decoder))
            case "error": message = .error(code: envelope.code ?? "unknown", message: envelope.message ?? "", id: envelope.id)
            case let other: message = .unrecognized(type: other)
            }
        } catch {
            throw Fault.payload(type: envelope.type, underlying: error)
        }
    }
}

/// The keys every daemon message has, read before the payload.
private struct MessageEnvelope: Decodable {
    var type: String
    var version: Int
    var code: String?
    var message: String?
    var id: String?
}
