import Foundation
import Reachability
import Testing
import TestSupport
@testable import reachd

/// The metrics' settings, their HTTP answers and their names, without a
/// daemon (MetricsScrapeTests has one, and a real Prometheus).
@Suite("Metrics")
struct MetricsTests {
    @Test func theListenAddressIsLoopbackUnlessSaidOtherwise() throws {
        #expect(try MetricsSettings.Address.parse("yes").description == "127.0.0.1:10077")
        #expect(try MetricsSettings.Address.parse("9999").description == "127.0.0.1:9999")
        #expect(try MetricsSettings.Address.parse("0.0.0.0:9999").description == "0.0.0.0:9999")
        #expect(try MetricsSettings.Address.parse("[::1]").description == "[::1]:10077")
        #expect(try MetricsSettings.Address.parse("[::]:8080").family == .ipv6)
        #expect(throws: SettingError.self) { try MetricsSettings.Address.parse("0") }
        #expect(throws: SettingError.self) { try MetricsSettings.Address.parse("host.example:80") }
    }

    @Test func flagsWinOverTheFileAndAreCheckedAsEarly() throws {
        let path = try ConfigurationFileTests.write("[metrics]\nlisten = 9100\ntextfile = /tmp/a.prom\n[watch]\ntargets = a.example b.example:80\n")
        let fromFile = try DaemonCommand.parse(["--config", path]).settings()
        #expect(fromFile.metrics.listen?.description == "127.0.0.1:9100" && fromFile.metrics.textfile == "/tmp/a.prom")
        #expect(fromFile.watchedTargets.map(\.description) == ["a.example:443", "b.example:80"])
        let flags = try DaemonCommand.parse([
            "--config", path, "--metrics-listen", "[::1]:9200", "--metrics-textfile", "/tmp/b.prom", "--watch", "c.example:22",
        ]).settings()
        #expect(flags.metrics.listen?.description == "[::1]:9200" && flags.metrics.textfile == "/tmp/b.prom")
        #expect(flags.watchedTargets.map(\.description) == ["c.example:22"])
        // Off unless asked for.
        let none = try DaemonCommand.parse(["--config", "/dev/null"]).settings()
        #expect(none.metrics == MetricsSettings() && none.watchedTargets.isEmpty)
        #expect(throws: (any Error).self) { try DaemonCommand.parse(["--watch", "x:0"]) }
        #expect(throws: (any Error).self) { try DaemonCommand.parse(["--watch", "a", "--watch", "b", "--max-watched-targets", "1"]) }
        #expect(throws: (any Error).self) { try DaemonCommand.parse(["--metrics-textfile", "relative.prom"]) }
    }

    static func answer(_ request: String) -> String? {
        MetricsRequest.answer(to: Array(request.utf8)) { Array("reachd_online 1\n".utf8) }
            .map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func itAnswersOneVerbOnOnePath() throws {
        let get = try #require(Self.answer("GET /metrics HTTP/1.1\r\nHost: localhost:10077\r\n\r\n"))
        #expect(get.hasPrefix("HTTP/1.1 200 OK\r\n") && get.contains("Content-Length: 16\r\n") && get.hasSuffix("\r\n\r\nreachd_online 1\n"))
        #expect(get.contains("Content-Type: text/plain; version=0.0.4"))
        let head = try #require(Self.answer("HEAD /metrics?x=1 HTTP/1.0\n\n"))
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n") && head.hasSuffix("\r\n\r\n"))
        #expect(Self.answer("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")?.hasPrefix("HTTP/1.1 404 ") == true)
        #expect(Self.answer("POST /metrics HTTP/1.1\r\nHost: [::1]:10077\r\n\r\n")?.contains("Allow: GET, HEAD\r\n") == true)
        #expect(Self.answer("GET /metrics\r\n\r\n")?.hasPrefix("HTTP/1.1 400 ") == true)
        #expect(Self.answer("\u{16}\u{03}\u{01}\u{02}\r\n\r\n")?.hasPrefix("HTTP/1.1 400 ") == true)
        // Incomplete: more may come, until the head is too long.
        #expect(Self.answer("GET /metrics HTTP/1.1\r\nHost: localhost\r\n") == nil)
        let long = "GET /metrics HTTP/1.1\r\nX: " + String(repeating: "a", count: MetricsRequest.maxHead)
        #expect(Self.answer(long)?.hasPrefix("HTTP/1.1 431 ") == true)
    }

    /// DNS rebinding: a web page whose name now points at 127.0.0.1 sends
    /// its own name as Host. Only an address, localhost, this machine's name
    /// or a configured one is answered; anything else is 421, with nothing
    /// of the metrics in it.
    @Test func onlyThisHostsNamesAreAnswered() throws {
        for host in ["127.0.0.1", "127.0.0.1:10077", "[::1]:10077", "[::1]", "LocalHost", "localhost.", "10.0.0.5:9"] {
            let answer = try #require(Self.answer("GET /metrics HTTP/1.1\r\nHost: \(host)\r\n\r\n"))
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "\(host): \(answer)")
        }
        for host in ["rebind.attacker.example:10077", "rebind.attacker.example", "localhost.attacker.example", "127.0.0.1.nip.io",
                     "::1", "[::1]x", "[not-an-address]:1", "localhost:http", ""] {
            let answer = try #require(Self.answer("GET /metrics HTTP/1.1\r\nHost: \(host)\r\n\r\n"))
            #expect(answer == "HTTP/1.1 421 Misdirected Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", "\(host): \(answer)")
        }
        let named = MetricsRequest.answer(to: Array("GET /metrics HTTP/1.1\r\nHost: metrics.example.net:10077\r\n\r\n".utf8),
                                           hosts: ["metrics.example.net"]) { [] }
        #expect(named.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("HTTP/1.1 200 ") == true, "a name set in [metrics] hosts")
        // HTTP/1.1 requires a Host, exactly one; HTTP/1.0 may leave it out.
        #expect(Self.answer("GET /metrics HTTP/1.1\r\n\r\n")?.hasPrefix("HTTP/1.1 400 ") == true)
        #expect(Self.answer("GET /metrics HTTP/1.1\r\nHost: localhost\r\nhost: evil.example\r\n\r\n")?.hasPrefix("HTTP/1.1 400 ") == true)
        #expect(Self.answer("GET /metrics HTTP/1.0\r\n\r\n")?.hasPrefix("HTTP/1.1 200 ") == true)
        #expect(throws: SettingError.self) { try MetricsSettings.parseHosts("ok.example bad/name") }
        #expect(try MetricsSettings.parseHosts(" a.example  b-1.example ") == ["a.example", "b-1.example"])
    }

    /// The names are a contract (docs/PROTOCOL.md): each is in the exposition,
    /// with its type, and every one the exposition has is documented.
    @Test func everyNameInTheContractIsExposedAndDocumented() throws {
        let metrics = DaemonMetrics(watching: [try Destination(parsing: "db.internal:5432")])
        let text = String(decoding: metrics.exposition(subscribers: 2, counts: .init(refused: 3, resyncs: 1, journalDropped: 4)), as: UTF8.self)
        let contract: [(String, String)] = [
            ("reachd_online", "gauge"), ("reachd_family_online", "gauge"), ("reachd_connectivity", "gauge"), ("reachd_dns", "gauge"),
            ("reachd_metered", "gauge"), ("reachd_status_changes_total", "counter"), ("reachd_path_changes_total", "counter"),
            ("reachd_last_change_timestamp_seconds", "gauge"), ("reachd_destination_reachable", "gauge"),
            ("reachd_destination_changes_total", "counter"), ("reachd_subscribers", "gauge"),
            ("reachd_clients_refused_total", "counter"), ("reachd_netlink_resyncs_total", "counter"),
            ("reachd_journal_dropped_total", "counter"), ("reachd_connections_failed_total", "counter"),
            ("reachd_stalls_total", "counter"),
            ("reachd_build_info", "gauge"),
        ]
        for (name, type) in contract {
            #expect(text.contains("# TYPE \(name) \(type)\n"), "\(name) is a \(type)")
        }
        #expect(text.contains("reachd_subscribers 2") && text.contains("reachd_clients_refused_total 3")
                && text.contains("reachd_journal_dropped_total 4"))
        #expect(text.contains("reachd_destination_reachable{target=\"db.internal:5432\"} 0"))
        let exposed = Set(text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { String($0.split(separator: " ")[2]) })
        #expect(exposed == Set(contract.map(\.0)))
        let protocolText = try String(
            contentsOf: TestInstallation.packageRoot.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        for name in exposed { #expect(protocolText.contains("`\(name)"), "\(name) is documented in PROTOCOL.md") }
    }

    /// The counters count what a status says changed: a handover is a path
    /// change while `reachd_online` stays 1; a watched target's first answer
    /// after resolving is none.
    @Test func countersCountTheChangesAStatusCarries() throws {
        let metrics = DaemonMetrics(watching: [try Destination(parsing: "db.internal:5432")])
        let eth0 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "10.0.0.1")
        let tun0 = NetworkPath(interface: "tun0", index: 9, family: .ipv4, gateway: nil)
        var status = NetworkStatus.built(ipv4: .through(eth0), changedAt: Date())
        metrics.observe(status)
        status.ipv4.path = tun0
        status.changes = [
            .path(.ipv4, from: eth0, to: tun0), .watched(target: "db.internal:5432", from: .pending, to: .reachable),
        ]
        metrics.observe(status)
        status.changes = [.path(.ipv4, from: tun0, to: eth0), .watched(target: "db.internal:5432", from: .reachable, to: .unreachable)]
        metrics.observe(status)
        let text = String(decoding: metrics.exposition(subscribers: 0, counts: .init()), as: UTF8.self)
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.isSuperset(of: [
            "reachd_path_changes_total{family=\"ipv4\"} 2", "reachd_path_changes_total{family=\"ipv6\"} 0",
            "reachd_destination_changes_total{target=\"db.internal:5432\"} 1",
        ]))
        #expect(lines.contains { $0.hasPrefix("reachd_online 1") }, "online throughout")
    }

    /// The README's reachd.conf is one the daemon takes, meaning what the
    /// README says of it.
    @Test func theReadmesConfigurationIsAConfiguration() throws {
        let readme = try String(contentsOf: TestInstallation.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```ini\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let block = try #require(blocks.first { $0.contains("[metrics]") }, "the README shows [metrics]")
        let settings = try DaemonCommand.parse(["--config", try ConfigurationFileTests.write(block)]).settings()
        #expect(settings.metrics.listen?.description == "127.0.0.1:10077")
        #expect(readme.contains("`listen = yes` serves `http://127.0.0.1:10077/metrics`"))
        #expect(settings.watchedTargets.count == 3)
        // The textfile under the unit: a configuration, and the file the
        // README's tmpfiles.d line links to.
        let textfileBlock = try #require(blocks.first { $0.contains("textfile =") }, "the README shows [metrics] textfile")
        let textfile = try DaemonCommand.parse(["--config", try ConfigurationFileTests.write(textfileBlock)]).settings().metrics.textfile
        let link = try #require(readme.split(separator: "\n").first { $0.hasPrefix("L+ ") })
        #expect(textfile.map { link.hasSuffix(" \($0)") } == true, "\(link) links to \(textfile ?? "no textfile")")
    }
}
