import Foundation
import Testing
@testable import Reachability

/// Metering from the configuration, end to end through the daemon.
@Suite("Metered interfaces in network namespaces", .serialized, .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct MeteredInterfaceTests {
    @Test func aVethIsNotMeteredUnlessTheConfigurationSaysSo() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        var daemon = try await network.startDaemon(["--config", "/dev/null"])
        var status = try await network.waitForStatus("online") { $0.reachability == .online }
        #expect(!status.metered && status.interfaces.first { $0.name == "vh" }?.metered == .no)
        daemon.signal(SIGTERM)
        try await daemon.wait()

        let configuration = network.directory.appendingPathComponent("reachd.conf")
        try "[metered]\nvh = yes\n".write(to: configuration, atomically: true, encoding: .utf8)
        daemon = try await network.startDaemon(["--config", configuration.path])
        status = try await network.waitForStatus("online") { $0.reachability == .online }
        #expect(status.metered, "the primary path leaves through vh")
        #expect(status.interfaces.first { $0.name == "vh" }?.metered == .yes)
        #expect(status.interfaces.first { $0.name == "lo" }?.metered == .no)
        _ = daemon
    }
}
