import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus session bus of its own, in a test network's host namespace, on
/// which GTK apps publish their accessible objects (AT-SPI starts its bus
/// from there); and what a screen reader finds in an app, read through it
/// by `Desktop/accessible-tree.py`.
final class AccessibilityBus: @unchecked Sendable {
    static let tools = ["/usr/bin/dbus-daemon", "/usr/libexec/at-spi-bus-launcher", "/usr/lib/x86_64-linux-gnu/girepository-1.0/Atspi-2.0.typelib"]
    static var available: Bool { tools.allSatisfy(FileManager.default.fileExists(atPath:)) }
    static let reason: Comment = "needs dbus, at-spi2-core and gir1.2-atspi-2.0 (make test installs them)"
    static let reader = packageRoot.appendingPathComponent("Tests/reachdTests/Desktop/accessible-tree.py").path

    /// One accessible object, as AT-SPI gives it.
    struct Object: Decodable, Equatable {
        var role: String
        var name: String
        var description: String
    }

    private let daemon: Subprocess
    private let directory: URL
    private let namespace: String
    /// The environment a program needs to be on this bus.
    let environment: [String]

    init(in network: TestNetwork) async throws {
        directory = network.directory.appendingPathComponent("session-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        namespace = network.host
        // A path, not an abstract socket: it is there to see, and the test
        // knows when it listens. AT-SPI's own bus, started from this one,
        // lives in the same namespace as its clients.
        let address = "unix:path=\(directory.appendingPathComponent("bus").path)"
        daemon = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", namespace, "/usr/bin/dbus-daemon", "--session", "--nofork",
            "--address=\(address)", "--print-address=1",
        ])
        environment = ["DBUS_SESSION_BUS_ADDRESS=\(address)", "XDG_RUNTIME_DIR=\(directory.path)"]
        let daemon = daemon
        _ = try await eventually("the session bus listening") { () -> String? in
            guard daemon.isRunning else { throw HarnessError.commandFailed("dbus-daemon exited: \(daemon.errorOutput)") }
            return daemon.outputLines.first
        }
    }

    deinit {
        daemon.signal(SIGTERM)
    }

    /// Every showing object of the application named `application`, as a
    /// screen reader finds it now; nil while no such application is there.
    func objects(of application: String) async throws -> [Object]? {
        let read = try await Subprocess.run(
            ["/usr/bin/env", "ip", "netns", "exec", namespace, "/usr/bin/env"] + environment
                + ["/usr/bin/python3", Self.reader, application], timeout: .seconds(20))
        guard read.status == 0 else { return nil }
        return try read.output.split(separator: "\n").map { line in
            try JSONDecoder().decode(Object.self, from: Data(line.utf8))
        }
    }
}
