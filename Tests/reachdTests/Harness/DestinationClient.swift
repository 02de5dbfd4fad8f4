import Foundation
import TestSupport
@testable import Reachability

/// A protocol client that watches destinations and reads their answers, for
/// tests that need to see every line the daemon sends, and nothing else.
final class DestinationClient: @unchecked Sendable {
    let socket: SocketClient

    /// Connected from `network`'s host namespace, where its daemon is: a
    /// client of another namespace is answered `other_network`.
    init(in network: TestNetwork) async throws {
        socket = try await SocketClient(in: network, path: network.socketPath)
    }

    func watch(_ id: String, _ target: String, family: AddressFamily? = nil) throws {
        try socket.send(ClientRequest(.watch, destination: try Destination(parsing: target), id: id, family: family).line)
    }

    /// The next line, which must be a destination answer.
    func next(timeout: Duration = .seconds(5)) async throws -> DestinationStatus {
        let line = try await socket.readLine(timeout: timeout)
        guard let line, case .destination(let status) = try DaemonMessage.decode(Array(line.utf8)) else {
            throw HarnessError.commandFailed("expected a destination line, got \(line ?? "the end of the stream")")
        }
        return status
    }

    /// The next line for watch `id` that is not pending: a name's first
    /// answer may be `pending` while it resolves.
    func settled(_ id: String, timeout: Duration = .seconds(5)) async throws -> DestinationStatus {
        while true {
            let status = try await next(timeout: timeout)
            guard status.id == id else { throw HarnessError.commandFailed("a line for \(status.id ?? "nil"), not \(id)") }
            if status.state != .pending { return status }
        }
    }

    /// The next line, raw: errors included.
    func nextLine(timeout: Duration = .seconds(5)) async throws -> String? {
        try await socket.readLine(timeout: timeout)
    }
}
