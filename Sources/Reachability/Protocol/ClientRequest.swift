#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a client may ask the daemon, one JSON object per line: an operation
/// and how much of each status it wants.
package struct ClientRequest: Sendable, Hashable {
    package enum Operation: String, Sendable, CaseIterable {
        /// `{"op":"get"}`: one status.
        case get
        /// `{"op":"subscribe"}`: the current status, then one per published change.
        case subscribe
        /// `{"op":"check"}`: run the connectivity check now (after signing in to a
        /// portal, say) and answer with the status once it has.
        case check
    }

    package var operation: Operation
    /// `"detail":"summary"` asks for statuses without the interface list and,
    /// for a subscription, only the changes of a summary. Absent: `full`, what
    /// clients that predate it get.
    package var detail: StatusDetail

    package init(_ operation: Operation, detail: StatusDetail = .full) {
        self.operation = operation
        self.detail = detail
    }

    package static let get = ClientRequest(.get)
    package static let subscribe = ClientRequest(.subscribe)
    package static let check = ClientRequest(.check)

    /// The line a client sends, newline included; a full request is spelled
    /// as clients that predate `detail` spell it.
    package var line: [UInt8] {
        switch detail {
        case .full: Array("{\"op\":\"\(operation.rawValue)\"}\n".utf8)
        case .summary: Array("{\"op\":\"\(operation.rawValue)\",\"detail\":\"summary\"}\n".utf8)
        }
    }

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
        guard let operation = Operation(rawValue: op) else {
            return .failure(RequestError("unknown op \"\(op)\"; expected \"get\", \"subscribe\" or \"check\""))
        }
        var detail = StatusDetail.full
        if let asked = envelope.detail {
            guard let known = StatusDetail(rawValue: asked) else {
                return .failure(RequestError("unknown detail \"\(asked)\"; expected \"full\" or \"summary\""))
            }
            detail = known
        }
        return .success(ClientRequest(operation, detail: detail))
    }
}

/// Why the daemon rejected a request; sent as `{"type":"error","code":"bad_request",...}`.
package struct RequestError: Error, Sendable, Equatable {
    package let message: String
    package init(_ message: String) { self.message = message }
}

private struct RequestEnvelope: Decodable {
    var op: String?
    var detail: String?
}
