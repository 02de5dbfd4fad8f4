import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A GLib app (`GLibApps/gio-app.py`, the real GLib through python3-gi) in
/// a network's host namespace, with the GIO module `make` builds on GIO's
/// module path and asked for first, as an installed one would be by its
/// priority. Its events are JSON lines; commands go through a FIFO.
final class GLibApp: @unchecked Sendable {
    static let moduleDirectory = packageRoot.appendingPathComponent(".build/gio")
    static let script = packageRoot.appendingPathComponent("Tests/reachdTests/GLibApps/gio-app.py")

    /// What the app printed: one per event, with the monitor's state then.
    struct Event: Decodable {
        var event: String
        var available: Bool
        var connectivity: String
        var metered: Bool
        var type: String?
        var chosenMs: Double?
        var property: String?
        var argument: Bool?
        var target: String?
        var reachable: Bool?
        var error: String?
        var message: String?
        var ms: Double?

        enum CodingKeys: String, CodingKey {
            case event, available, connectivity, metered, type, property, argument, target, reachable, error, message, ms
            case chosenMs = "chosen_ms"
        }
    }

    static var available: Bool {
        NamespaceSupport.available
            && FileManager.default.fileExists(atPath: moduleDirectory.appendingPathComponent("libgioreachd.so").path)
            && Subprocess.runBlocking(["/usr/bin/python3", "-c", "from gi.repository import Gio"]) == 0
    }

    static let reason: Comment = NamespaceSupport.available
        ? "needs the GIO module (make gio-module) and python3-gi: `make test` provides both"
        : NamespaceSupport.reason

    let process: Subprocess
    private let commands: String

    /// - Parameters:
    ///   - socket: the daemon's socket, as REACHD_SOCKET.
    ///   - namespace: where the app runs: the network's host namespace unless said.
    ///   - environment: more variables for the app (`NAME=value`).
    init(in network: TestNetwork, socket: String, namespace: String? = nil, environment: [String] = []) async throws {
        commands = network.directory.appendingPathComponent("gio-app-\(UUID().uuidString.prefix(8))").path
        guard mkfifo(commands, 0o600) == 0 else { throw HarnessError.commandFailed("mkfifo \(commands)") }
        process = try Subprocess(
            ["/usr/bin/env", "GIO_EXTRA_MODULES=\(Self.moduleDirectory.path)", "GIO_USE_NETWORK_MONITOR=reachd",
             "REACHD_SOCKET=\(socket)"] + environment + ["ip", "netns", "exec", namespace ?? network.host, "/usr/bin/python3", Self.script.path,
             commands])
        _ = try await eventually("the app's monitor") { () -> Bool? in
            guard process.isRunning else { throw HarnessError.commandFailed("the app exited: \(process.errorOutput)") }
            return events.first.map { _ in true }
        }
    }

    deinit { process.signal(SIGKILL) }

    var events: [Event] {
        process.outputLines.compactMap { try? JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
    }

    var ready: Event { events[0] }

    /// The app's state once `holds` says it is the daemon's word. A daemon
    /// that answers after init's deadline (250 ms: a test's fake, under
    /// make test's load) is followed all the same, GLib's backend answering
    /// first, and its word comes as a change after "ready".
    func settles(_ what: String, where holds: @escaping (Event) -> Bool) async throws -> Event {
        var last = ready
        do {
            return try await eventually(what, timeout: .seconds(10)) { () -> Event? in
                last = events.last ?? last
                return holds(last) ? last : nil
            }
        } catch {
            throw HarnessError.timedOut("\(what): the app's state stayed \(last)")
        }
    }

    /// The module's debug messages, which GLib writes to standard output
    /// beside the events: what it decided, where no property says so.
    static let moduleDebug = "G_MESSAGES_DEBUG=reachd-gio"

    /// How often the module, run with ``moduleDebug``, said it follows
    /// GLib's backend because the daemon stopped answering.
    var fallbacks: Int {
        process.outputLines.count { $0.contains("the daemon does not answer; following GLib's") }
    }

    /// Waits for the module to say so once more than `before` times (taken
    /// before the daemon was stopped: a fallback at start-up says the same).
    /// It says so before it takes the backend's first state, which reaches
    /// the app's main loop after: a test of what the backend moved holds a
    /// window of its own after this.
    func fallsBackToGLibsBackend(after before: Int) async throws {
        _ = try await eventually("the module follows GLib's backend: \(process.outputLines.suffix(5))", timeout: .seconds(15)) {
            fallbacks > before ? true : nil
        }
    }

    /// The `network-changed` signals so far, with the state each came with.
    var signals: [Event] { events.filter { $0.event == "network-changed" } }

    func send(_ command: String) throws {
        let fd = open(commands, O_WRONLY | O_NONBLOCK)
        guard fd >= 0 else { throw HarnessError.commandFailed("open \(commands): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let line = Array((command + "\n").utf8)
        guard write(fd, line, line.count) == line.count else { throw HarnessError.commandFailed("write \(command)") }
    }

    /// Asks `can_reach` (or `can_reach_async`) and waits for the answer.
    func reach(_ target: String, async: Bool = false) async throws -> Event {
        try await ask(async ? "reach-async" : "reach", target)
    }

    /// Asks `can_reach` (or `can_reach_async`) of a GNetworkService and
    /// waits for the answer.
    func reachService(_ service: String, _ protocol: String, _ domain: String, async: Bool = false) async throws
        -> Event
    {
        try await ask(async ? "reach-service-async" : "reach-service", "\(service) \(`protocol`) \(domain)")
    }

    private func ask(_ command: String, _ target: String) async throws -> Event {
        let before = events.count
        try send("\(command) \(target)")
        return try await eventually("the answer for \(target)") {
            events.dropFirst(before).first { $0.event == "reach" && $0.target == target }
        }
    }

    /// The longest the app's main loop waited between two heartbeat ticks
    /// since the last time asked (`heartbeat` started them), in ms, less
    /// what the kernel kept it waiting for a CPU: what the app's own code
    /// (the module's included) held it, whatever else the machine runs.
    func longestWait() async throws -> Double {
        let before = events.count
        try send("longest-wait")
        let event = try await eventually("the app's longest wait") { events.dropFirst(before).first { $0.event == "longest-wait" } }
        return event.ms ?? .infinity
    }

    /// Waits for signal number `count` (from 1).
    func signal(_ count: Int, _ what: String, timeout: Duration = .seconds(10)) async throws -> Event {
        try await eventually(what, timeout: timeout) { () -> Event? in
            guard process.isRunning else { throw HarnessError.commandFailed("the app exited: \(process.errorOutput)") }
            let seen = signals
            return seen.count >= count ? seen[count - 1] : nil
        }
    }
}
