import Foundation
import Reachability
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Debian's Prometheus and node_exporter, which make test installs.
enum PrometheusTools {
    static var available: Bool {
        ["/usr/bin/prometheus", "/usr/bin/prometheus-node-exporter"].allSatisfy(FileManager.default.isExecutableFile(atPath:))
    }
    static let reason: Comment = "needs Debian's prometheus and prometheus-node-exporter (make test installs them)"
}

/// The daemon's metrics as a fleet reads them: a real Prometheus scraping
/// the listener every second, node_exporter's textfile collector reading
/// the textfile, and scrapers that mean harm. All in the test network's
/// host namespace, on its loopback.
@Suite(
    "Metrics, scraped by Prometheus", .serialized,
    .enabled(if: NamespaceSupport.available, NamespaceSupport.reason),
    .enabled(if: PrometheusTools.available, PrometheusTools.reason))
struct MetricsScrapeTests {
    /// What `url` answers in the host namespace: its body, or nil.
    static func fetch(_ url: String, in network: TestNetwork) async throws -> String? {
        let result = try await Subprocess.run([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c",
            "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())", url,
        ])
        return result.status == 0 ? result.output : nil
    }

    /// A PromQL query's single value, through Prometheus' HTTP API; nil while it has none.
    static func query(_ promql: String, in network: TestNetwork) async throws -> Double? {
        let encoded = promql.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        guard let body = try await fetch("http://127.0.0.1:9090/api/v1/query?query=\(encoded)", in: network),
            let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
            result.count == 1, let value = result[0]["value"] as? [Any], value.count == 2, let text = value[1] as? String
        else { return nil }
        return Double(text)
    }

    /// Waits until `promql` is `expected` in Prometheus.
    static func waitUntil(_ promql: String, is expected: Double, in network: TestNetwork) async throws {
        var last: Double?
        do {
            _ = try await eventually("\(promql) == \(expected)", timeout: .seconds(20)) { () -> Bool? in
                last = try await query(promql, in: network)
                return last == expected ? true : nil
            }
        } catch {
            Issue.record("\(promql) stayed \(last.map { "\($0)" } ?? "absent"), not \(expected)")
            throw error
        }
    }

    @Test func prometheusSeesTheFlipAndAnOnLinkTargetStayingUp() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon(["--metrics-listen", "yes", "--watch", "10.77.0.1:8080"])
        let config = network.directory.appendingPathComponent("prometheus.yml")
        try """
            global:
              scrape_interval: 1s
            scrape_configs:
              - job_name: reachd
                static_configs:
                  - targets: ['127.0.0.1:10077']
            """.write(to: config, atomically: true, encoding: .utf8)
        let prometheus = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/prometheus", "--config.file=\(config.path)",
            "--storage.tsdb.path=\(network.directory.appendingPathComponent("tsdb").path)",
            "--web.listen-address=127.0.0.1:9090",
        ])
        defer { prometheus.signal(SIGTERM) }

        try await Self.waitUntil(#"up{job="reachd"}"#, is: 1, in: network)
        try await Self.waitUntil(#"reachd_family_online{family="ipv4"}"#, is: 1, in: network)
        let before = try #require(try await Self.query("reachd_status_changes_total", in: network))

        try await network.inHost("route del default")
        try await Self.waitUntil(#"reachd_family_online{family="ipv4"}"#, is: 0, in: network)
        try await Self.waitUntil("reachd_online", is: 0, in: network)
        // One change, one count.
        try await Self.waitUntil("reachd_status_changes_total", is: before + 1, in: network)
        // The gateway is on-link: reachable by routing all along, by every scrape.
        try await Self.waitUntil(#"min_over_time(reachd_destination_reachable{target="10.77.0.1:8080"}[1m])"#, is: 1, in: network)
        try await Self.waitUntil(#"reachd_connectivity{state="unknown"}"#, is: 1, in: network)
        try await Self.waitUntil("count(reachd_connectivity)", is: 5, in: network)
        #expect(daemon.isRunning, "\(daemon.errorOutput)")
    }

    /// As the README sets it up under the unit: the daemon writes in a
    /// directory of its own, and the collector's directory links to the file.
    @Test func nodeExportersTextfileCollectorReadsTheFile() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let directory = network.directory.appendingPathComponent("textfile")
        let own = network.directory.appendingPathComponent("metrics")
        for folder in [directory, own] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let textfile = own.appendingPathComponent("reachd.prom").path
        try FileManager.default.createSymbolicLink(
            atPath: directory.appendingPathComponent("reachd.prom").path, withDestinationPath: textfile)
        let daemon = try await network.startDaemon(["--metrics-textfile", textfile])
        let exporter = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/prometheus-node-exporter",
            "--web.listen-address=127.0.0.1:9100", "--collector.disable-defaults", "--collector.textfile",
            "--collector.textfile.directory=\(directory.path)",
        ])
        defer { exporter.signal(SIGTERM) }
        func scrape() async throws -> String {
            try await eventually("node_exporter answering") { try await Self.fetch("http://127.0.0.1:9100/metrics", in: network) }
        }
        let online = try await scrape()
        #expect(online.contains("\nreachd_online 1") && online.contains("\nnode_textfile_scrape_error 0"), "\(online)")

        // Rewritten on the change, whole: never an error in between.
        try await network.inHost("route del default")
        let offline = try await eventually("the textfile says offline") { () -> String? in
            let text = try await scrape()
            #expect(text.contains("\nnode_textfile_scrape_error 0"), "\(text)")
            return text.contains("\nreachd_online 0") ? text : nil
        }
        #expect(offline.contains("\nreachd_status_changes_total 1"), "\(offline)")
        #expect(daemon.isRunning, "\(daemon.errorOutput)")

        // Stopped, the daemon takes its file along: the collector serves no
        // state nobody watches any more, and says the link dangles.
        daemon.signal(SIGTERM)
        #expect(try await daemon.wait() == 0, "\(daemon.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: textfile))
        let stopped = try await scrape()
        #expect(!stopped.contains("\nreachd_online") && stopped.contains("\nnode_textfile_scrape_error 1"), "\(stopped)")
    }

    /// A slow-loris, a 1 MB request line and 10,000 connections at once:
    /// each is cut off, and meanwhile a subscriber hears a flip and a real
    /// scrape is answered.
    @Test func hostileScrapersHurtNobody() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon(["--metrics-listen", "yes"])
        let (subscriber, _) = try await SocketClient.subscribed(to: network.socketPath)
        let attack = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c", Self.attacker,
        ])
        defer { attack.signal(SIGTERM) }
        _ = try await eventually("the attack under way", timeout: .seconds(20)) {
            attack.output.contains("storm") ? true : nil
        }

        try await network.inHost("route del default")
        let heard = try await subscriber.readStatus(timeout: .seconds(2))
        #expect(heard.ipv4.reachability != .online, "the subscriber heard the flip during the storm")
        let scrape = try await eventually("a scrape answered during the storm", timeout: .seconds(20)) {
            try await Self.fetch("http://127.0.0.1:10077/metrics", in: network)
        }
        #expect(scrape.contains("reachd_online 0"))

        let status = try await attack.wait(timeout: .seconds(60))
        #expect(status == 0, "the attacker said: \(attack.output) \(attack.errorOutput)")
        #expect(attack.output.contains("slow-loris cut off") && attack.output.contains("huge request refused: 431"), "\(attack.output)")
        #expect(daemon.isRunning, "\(daemon.errorOutput)")
    }

    /// The three attacks, reporting each as it ends.
    static let attacker = #"""
        import resource, socket, sys, time
        resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
        def out(text):
            print(text, flush=True)
        address = ("127.0.0.1", 10077)

        # A slow-loris: a byte a second, never a whole head.
        loris = socket.create_connection(address)
        loris.settimeout(10)
        start = time.monotonic()
        try:
            for byte in b"GET /metrics HTTP/1.1\r\nX-Slow: " + b"a" * 60:
                loris.send(bytes([byte]))
                time.sleep(0.25)
        except OSError:
            pass
        if loris.recv(1) == b"" and time.monotonic() - start < 9:
            out("slow-loris cut off after %.1f s" % (time.monotonic() - start))

        # A request line of a megabyte.
        huge = socket.create_connection(address)
        huge.settimeout(10)
        try:
            huge.sendall(b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\n\r\n")
        except OSError:
            pass
        answer = huge.recv(64)
        out("huge request refused: " + answer.split(b" ")[1].decode() if answer.startswith(b"HTTP/1.1 ") else "huge: " + repr(answer))

        # 10,000 connections at once, held open.
        held = []
        for _ in range(10000):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(address)
            except BlockingIOError:
                pass
            held.append(s)
        out("storm: %d connections" % len(held))
        time.sleep(8)
        for s in held:
            s.close()
        """#
}
