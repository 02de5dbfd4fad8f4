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
        /// `{"op":"reach","target":"api.example.com:443"}`: one destination
        /// answer, once its name has resolved.
        case reach
        /// `{"op":"watch","id":"api","target":"api.example.com:443"}`: the
        /// destination's answer now, then one per change, tagged with the id.
        case watch
        /// `{"op":"unwatch","id":"api"}`: stop a watch.
        case unwatch

        /// Every operation, for the errors that list them: "get", "subscribe", … or "unwatch".
        static var listed: String {
            let quoted = allCases.map { "\"\($0.rawValue)\"" }
            return quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
        }
    }

    /// The longest watch id, in bytes.
    package static let maximumIDLength = 64

    package var operation: Operation
    /// `"detail":"summary"` asks for statuses without the interface list and,
    /// for a subscription, only the changes of a summary. Absent: `full`, what
    /// clients that predate it get.
    package var detail: StatusDetail
    /// What `reach` and `watch` ask about.
    package var destination: Destination?
    /// The client's name for a watch (`watch`, `unwatch`), or for a `reach`
    /// answer, which may come back after later ones.
    package var id: String?
    /// Only this family's addresses (`"family":"ipv4"`); `nil`: both.
    package var family: AddressFamily?

    package init(
        _ operation: Operation, detail: StatusDetail = .full, destination: Destination? = nil, id: String? = nil,
        family: AddressFamily? = nil
    ) {
        self.operation = operation
        self.detail = detail
        self.destination = destination
        self.id = id
        self.family = family
    }

    package static let get = ClientRequest(.get)
    package static let subscribe = ClientRequest(.subscribe)
    package static let check = ClientRequest(.check)

    /// The line a client sends, newline included; a full request is spelled
    /// as clients that predate `detail` spell it.
    package var line: [UInt8] {
        switch operation {
        case .get, .subscribe, .check:
            switch detail {
            case .full: return Array("{\"op\":\"\(operation.rawValue)\"}\n".utf8)
            case .summary: return Array("{\"op\":\"\(operation.rawValue)\",\"detail\":\"summary\"}\n".utf8)
            }
        case .reach, .watch, .unwatch:
            return DaemonMessage.jsonLine(RequestEnvelope(
                op: operation.rawValue, id: id, target: destination?.description, family: family?.rawValue))
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
            return .failure(RequestError("request has no \"op\"; expected one of \(Operation.listed), as in {\"op\":\"get\"}"))
        }
        guard let operation = Operation(rawValue: op) else {
            return .failure(RequestError("unknown op \"\(op.escapingControlCharacters)\"; expected one of \(Operation.listed)"))
        }
        var detail = StatusDetail.full
        if let asked = envelope.detail {
            guard let known = StatusDetail(rawValue: asked) else {
                return .failure(RequestError(
                    "unknown detail \"\(asked.escapingControlCharacters)\"; expected \"full\" or \"summary\""))
            }
            detail = known
        }
        switch operation {
        case .get, .subscribe, .check:
            return .success(ClientRequest(operation, detail: detail))
        case .reach, .watch, .unwatch:
            // A destination's answer has no detail to choose: the key is
            // checked, not kept, as the line such a request writes never
            // says it (libFuzzer: a reach with "detail":"summary" did not
            // parse back to itself).
            return destinationRequest(ClientRequest(operation), envelope)
        }
    }

    /// Reads a destination request's own keys. A malformed id or family is a
    /// `bad_request` that closes the connection, like any malformed request;
    /// a target that is not a destination is answered `bad_destination`,
    /// with the id, and the connection and its other watches go on.
    private static func destinationRequest(
        _ request: ClientRequest, _ envelope: RequestEnvelope
    ) -> Result<ClientRequest, RequestError> {
        var request = request
        let op = request.operation.rawValue
        if let id = envelope.id {
            guard (1...maximumIDLength).contains(id.utf8.count) else {
                return .failure(RequestError("\"id\" must be 1 to \(maximumIDLength) bytes"))
            }
            request.id = id
        } else if request.operation != .reach {
            return .failure(RequestError("\"\(op)\" needs an \"id\": the name its answers are tagged with"))
        }
        if let family = envelope.family {
            let named = AddressFamily(rawValue: family)
            switch named {
            case .ipv4, .ipv6: request.family = named
            case .unrecognized:
                return .failure(RequestError(
                    "unknown family \"\(family.escapingControlCharacters)\"; expected \"ipv4\" or \"ipv6\""))
            }
        }
        guard request.operation != .unwatch else { return .success(request) }
        guard let target = envelope.target else {
            return .failure(RequestError(
                "\"\(op)\" needs a \"target\": HOST, HOST:PORT, [IPV6]:PORT, an address or an http or https URL"))
        }
        do {
            request.destination = try Destination(target: target)
        } catch {
            return .failure(RequestError(
                code: RequestError.badDestination, message: error.description, id: request.id, closesConnection: false))
        }
        return .success(request)
    }
}

/// Why the daemon rejected a request; sent as
/// `{"type":"error","code":"bad_request",...}`, with the request's `id` when
/// it had one.
package struct RequestError: Error, Sendable, Equatable {
    package let code: String
    package let message: String
    package let id: String?
    /// Malformed requests end the connection; a refused watch does not.
    package let closesConnection: Bool

    package init(_ message: String) {
        self.init(code: "bad_request", message: message, id: nil, closesConnection: true)
    }

    package init(code: String, message: String, id: String?, closesConnection: Bool) {
        self.code = code
        self.message = message
        self.id = id
        self.closesConnection = closesConnection
    }

    /// The error line the daemon sends.
    package var line: [UInt8] { DaemonMessage.error(code: code, message: message, id: id).line() }

    /// A watch over one of the daemon's limits: asking again gets the same.
    package static let tooManyWatches = "too_many_watches"
    /// A `reach` or `watch` target that is not a destination.
    package static let badDestination = "bad_destination"
    /// A `watch` whose id the connection already uses.
    package static let duplicateID = "duplicate_id"
    /// An `unwatch` that names no watch of the connection.
    package static let unknownID = "unknown_id"
    /// The kernel's route lookup failed; the watch is kept, and answered at
    /// the next evaluation.
    package static let lookupFailed = "lookup_failed"
    /// A `reach` or `watch` from a process of another network namespace:
    /// the daemon's routes and resolver are not that process's network.
    package static let otherNetwork = "other_network"
}

private struct RequestEnvelope: Codable {
    var op: String?
    var detail: String?
    var id: String?
    var target: String?
    var family: String?

    init(op: String, id: String?, target: String?, family: String?) {
        self.op = op
        self.id = id
        self.target = target
        self.family = family
    }
}
