#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a client may ask the daemon, one JSON object per line.
package enum ClientRequest: String, Sendable, CaseIterable {
    /// `{"op":"get"}`: one status.
    case get
    /// `{"op":"subscribe"}`: the current status, then one per published change.
    case subscribe
    /// `{"op":"check"}`: run the connectivity check now (after signing in to a
    /// portal, say) and answer with the status once it has.
    case check

    /// The line a client sends, newline included.
    package var line: [UInt8] { Array("{\"op\":\"\(rawValue)\"}\n".utf8) }

    /// Parses one line (without its newline). The error text is what the daemon
    /// sends back, so it names what was wrong.
    package static func parse(_ line: some Collection<UInt8>) -> Result<ClientRequest, RequestError> {
        guard String(validating: line, as: UTF8.self) != nil else {
            return .failure(RequestError("request is not valid UTF-8"))
        }
        let envelope: RequestEnvelope
        do {
            envelope = try JSONDecoder().decode(RequestEnvelope.self, from: Data(line))
        } catch {
            return .failure(RequestError("request is not a JSON object; send one object per line, like {\"op\":\"get\"}"))
        }
        guard let op = envelope.op else {
            return .failure(RequestError("request has no \"op\"; expected {\"op\":\"get\"}, {\"op\":\"subscribe\"} or {\"op\":\"check\"}"))
        }
        guard let request = ClientRequest(rawValue: op) else {
            return .failure(RequestError("unknown op \"\(op)\"; expected \"get\", \"subscribe\" or \"check\""))
        }
        return .success(request)
    }
}

/// Why the daemon rejected a request; sent as `{"type":"error","code":"bad_request",...}`.
package struct RequestError: Error, Sendable, Equatable {
    package let message: String
    package init(_ message: String) { self.message = message }
}

private struct RequestEnvelope: Decodable {
    var op: String?
}
