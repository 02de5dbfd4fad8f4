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
        let directory = try network.folder("textfile")
        let own = try network.folder("metrics")
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
        #expect(attack.isRunning, "the storm lasted while the subscriber and the scrape were served: \(attack.output)")

        attack.signal(SIGUSR1)
        let status = try await attack.wait(timeout: .seconds(60))
        #expect(status == 0, "the attacker said: \(attack.output) \(attack.errorOutput)")
        #expect(attack.output.contains("slow-loris cut off") && attack.output.contains("huge request refused: 431"), "\(attack.output)")
        #expect(daemon.isRunning, "\(daemon.errorOutput)")
    }

    /// Any user may bind a free port first. The daemon starts anyway, serves
    /// its socket, says once what is wrong, and serves the metrics as soon
    /// as the port frees: it exited 2 before, which under the unit is a
    /// restart loop, then the start limit.
    @Test func aPortTakenFirstStopsNothingAndIsBoundOnceItFrees() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let squatter = try Subprocess(
            ["/usr/bin/env", "ip", "netns", "exec", network.host] + TestNetwork.asUser(HostileClientTests.nobody) + [
                "/usr/bin/python3", "-c",
                "import signal, socket\ns = socket.socket()\ns.bind(('127.0.0.1', 10077))\ns.listen()\nprint('bound', flush=True)\nsignal.pause()",
            ])
        defer { squatter.signal(SIGKILL) }
        _ = try await eventually("the port taken") { squatter.outputLines.first == "bound" ? true : nil }
        // Answers on its socket: startDaemon waits for that.
        let daemon = try await network.startDaemon(["--metrics-listen", "yes"])
        #expect(try await network.status().status.online)
        squatter.signal(SIGKILL)
        _ = try await squatter.wait()
        let scrape = try await eventually("a scrape once the port is free", timeout: .seconds(10)) {
            try await Self.fetch("http://127.0.0.1:10077/metrics", in: network)
        }
        #expect(scrape.contains("\nreachd_online 1"))
        #expect(daemon.isRunning, "\(daemon.errorOutput)")
        let complaints = daemon.errorOutput.components(separatedBy: "cannot serve metrics yet").count - 1
        #expect(complaints == 1, "said once, at error level, not at every retry: \(daemon.errorOutput)")
        #expect(daemon.errorOutput.contains("reachd-metrics.socket"), "says how to keep the port from being taken")
    }

    /// CPU time (user and system, in clock ticks) a process has used.
    static func cpuTicks(_ pid: pid_t) -> Int {
        let stat = readProcFile("/proc/\(pid)/stat")
        // After the command's name in parentheses: state is field 3, utime 14, stime 15.
        let fields = stat[(stat.lastIndex(of: ")").map { stat.index(after: $0) } ?? stat.startIndex)...].split(separator: " ")
        return fields.count > 12 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
    }

    /// Out of descriptors, a scraper waiting to be accepted kept the
    /// listener readable: the loop spun at 100% CPU until one freed. Now the
    /// listener pauses, and serves again once the daemon can open one.
    @Test func outOfDescriptorsAScraperCannotMakeTheDaemonSpin() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon(["--metrics-listen", "yes"])
        _ = try await eventually("the listener answers") { try await Self.fetch("http://127.0.0.1:10077/metrics", in: network) }
        // The soft limit only, below every descriptor the daemon has open:
        // nothing can be opened. (Raising a hard limit back would need
        // CAP_SYS_RESOURCE, which a container may not grant.)
        let soft = readProcFile("/proc/\(daemon.pid)/limits").split(separator: "\n").first { $0.hasPrefix("Max open files") }
            .flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first }.map(String.init) ?? "1024"
        #expect(try await Subprocess.run(["/usr/bin/prlimit", "--pid", "\(daemon.pid)", "--nofile=4:"]).status == 0)
        let scraper = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c", Self.patientScraper,
        ])
        defer { scraper.signal(SIGKILL) }
        _ = try await eventually("the scraper connected") { scraper.outputLines.first == "connected" ? true : nil }
        let before = Self.cpuTicks(daemon.pid)
        // 300 ticks is a core for 3 s; a paused listener tries once a second.
        #expect(try await holdsThroughout(.seconds(3), every: .milliseconds(250)) { Self.cpuTicks(daemon.pid) - before < 30 },
                "the daemon used \(Self.cpuTicks(daemon.pid) - before) ticks of CPU within 3 s while out of descriptors")
        #expect(try await Subprocess.run(["/usr/bin/prlimit", "--pid", "\(daemon.pid)", "--nofile=\(soft):"]).status == 0)
        let answered = try await eventually("the waiting scraper answered", timeout: .seconds(5)) {
            scraper.outputLines.count > 1 ? scraper.outputLines[1] : nil
        }
        #expect(answered.hasPrefix("HTTP/1.1 200 "), "\(answered)")
        #expect(daemon.isRunning && daemon.errorOutput.contains("pausing the metrics listener"), "\(daemon.errorOutput.suffix(2000))")
    }

    /// Connects, says so, sends a scrape and prints the answer's first line.
    static let patientScraper = #"""
        import socket
        s = socket.create_connection(("127.0.0.1", 10077))
        print("connected", flush=True)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.settimeout(30)
        print(s.recv(4096).split(b"\r\n")[0].decode(), flush=True)
        """#

    /// One address holding every slot with idle connections kept Prometheus
    /// out until they timed out. A newcomer takes the slot of the connection
    /// idle longest.
    @Test func oneAddressHoldingIdleConnectionsKeepsNoOtherOut() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon(["--metrics-listen", "0.0.0.0:10077"])
        let holder = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c", """
            import signal, socket
            held = [socket.create_connection(("127.0.0.1", 10077), source_address=("127.0.0.1", 0)) for _ in range(100)]
            print("holding", len(held), flush=True)
            signal.pause()
            """,
        ])
        defer { holder.signal(SIGKILL) }
        _ = try await eventually("100 idle connections") { holder.outputLines.first == "holding 100" ? true : nil }
        // From another address of the host, as Prometheus on another machine would.
        let started = ContinuousClock.now
        let scrape = try await Subprocess.run([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c", """
            import socket, sys
            s = socket.create_connection(("10.77.0.2", 10077), timeout=5, source_address=("10.77.0.2", 0))
            s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: 10.77.0.2:10077\\r\\n\\r\\n")
            sys.stdout.write(s.recv(64).decode())
            """,
        ])
        #expect(ContinuousClock.now - started < .seconds(1), "answered in \(ContinuousClock.now - started)")
        #expect(scrape.output.hasPrefix("HTTP/1.1 200 "), "\(scrape.output)\(scrape.error)")
        #expect(daemon.isRunning)
    }

    /// Every local process connects from 127.0.0.1: a user holding 16 idle
    /// connections, and reopening each one the daemon closes, left 0 of 20
    /// scrapes answered while the slots were shared by address. A newcomer
    /// now takes the slot of the connection idle longest.
    @Test func idleConnectionsHeldAndReopenedFromTheSameAddressKeepNoScrapeOut() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon(["--metrics-listen", "127.0.0.1:10077"])
        defer { daemon.signal(SIGTERM) }
        let holder = try Subprocess([
            "/usr/bin/env", "ip", "netns", "exec", network.host] + TestNetwork.asUser(HostileClientTests.nobody) + [
            "/usr/bin/python3", "-c", """
            import selectors, socket
            def hold():
                s = socket.create_connection(("127.0.0.1", 10077))
                s.setblocking(False)
                watched.register(s, selectors.EVENT_READ)
            watched = selectors.DefaultSelector()
            for _ in range(16):
                hold()
            print("holding", flush=True)
            while True:
                for key, _ in watched.select():
                    try:
                        if key.fileobj.recv(4096):
                            continue
                    except OSError:
                        pass
                    watched.unregister(key.fileobj)
                    key.fileobj.close()
                    hold()
            """,
        ])
        defer { holder.signal(SIGKILL) }
        _ = try await eventually("16 idle connections") { holder.outputLines.first == "holding" ? true : nil }
        let scrapes = try await Subprocess.run([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c", """
            import socket, time
            answered = 0
            for _ in range(20):
                try:
                    s = socket.create_connection(("127.0.0.1", 10077), timeout=2)
                    s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
                    if s.recv(64).startswith(b"HTTP/1.1 200 "):
                        answered += 1
                    s.close()
                except OSError:
                    pass
                time.sleep(0.05)
            print(answered)
            """,
        ], timeout: .seconds(60))
        #expect(Int(scrapes.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 >= 19, "answered: \(scrapes.output) \(scrapes.error) \(scrapes.status)")
        #expect(holder.isRunning, "the holder kept at it: \(holder.errorOutput)")
        #expect(daemon.isRunning)
    }

    /// A page whose name was rebound to the host's address sends its own
    /// name as Host: it gets 421 and nothing of the metrics.
    @Test func aScrapeForAnotherHostGets421() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon(["--metrics-listen", "yes"])
        _ = try await eventually("the listener answers") { try await Self.fetch("http://127.0.0.1:10077/metrics", in: network) }
        let rebound = try await Subprocess.run([
            "/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c", """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", 10077), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: rebind.attacker.example:10077\\r\\n\\r\\n")
            answer = b""
            while chunk := s.recv(4096):
                answer += chunk
            sys.stdout.write(answer.decode())
            """,
        ])
        #expect(rebound.output == "HTTP/1.1 421 Misdirected Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                "\(rebound.output)\(rebound.error)")
        #expect(daemon.isRunning)
    }

    /// The three attacks, reporting each as it ends.
    static let attacker = #"""
        import resource, signal, socket, sys, time
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
        # Held until the test has heard a flip and got a scrape through.
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
        out("storm: %d connections" % len(held))
        signal.sigwait([signal.SIGUSR1])
        for s in held:
            s.close()
        """#
}
