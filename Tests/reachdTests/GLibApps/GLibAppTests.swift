import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The GIO module in a real GLib app (python3-gi): what every GLib program
/// on a machine with reachd installed gets from `GNetworkMonitor`.
@Suite("GLib apps through the GIO module", .enabled(if: GLibApp.available, GLibApp.reason))
struct GLibAppTests {
    /// The network's daemon with the host's link `vh` metered by reachd.conf:
    /// a word of the daemon's alone, for GLib's own backends never say
    /// metered.
    static func meteredDaemon(in network: TestNetwork) async throws -> Subprocess {
        let configuration = network.directory.appendingPathComponent("reachd.conf")
        try "[metered]\nvh = yes\n".write(to: configuration, atomically: true, encoding: .utf8)
        return try await network.startDaemon(["--config", configuration.path])
    }

    /// NetworkManager as GLib's backend sees it, connected to the site only
    /// (NM_STATE_CONNECTED_SITE, NM_CONNECTIVITY_LIMITED), answering each
    /// property after `delay` seconds, on a bus of its own: the variable
    /// that points an app at that bus, the stand-in, and the bus.
    static func networkManager(in network: TestNetwork, delay: Int) async throws -> (String, Subprocess, Subprocess) {
        let bus = network.directory.appendingPathComponent("system_bus_socket").path
        let dbus = try Subprocess(["/usr/bin/dbus-daemon", "--session", "--nofork", "--address=unix:path=\(bus)"])
        _ = try await eventually("the bus listens") { FileManager.default.fileExists(atPath: bus) ? true : nil }
        let address = "DBUS_SYSTEM_BUS_ADDRESS=unix:path=\(bus)"
        let standIn = try Subprocess([
            "/usr/bin/env", address, "/usr/bin/python3",
            packageRoot.appendingPathComponent("Tests/reachdTests/GLibApps/networkmanager-standin.py").path, "\(delay)", "60", "3",
        ])
        _ = try await eventually("NetworkManager's stand-in on the bus") { standIn.outputLines.first == "ready" ? true : nil }
        return (address, standIn, dbus)
    }

    /// GLib tries the module first (GIO_USE_NETWORK_MONITOR, as its priority
    /// does when installed) and takes its own netlink backend when no daemon
    /// runs.
    @Test func glibTakesTheModuleWhileTheDaemonRunsAndNetlinkOtherwise() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let withoutDaemon = try await GLibApp(in: network, socket: network.socketPath)
        #expect(withoutDaemon.ready.type == "GNetworkMonitorNetlink")
        // The README's way to see why, word for word.
        let why = try await Subprocess.run(
            ["/usr/bin/env", "GIO_EXTRA_MODULES=\(GLibApp.moduleDirectory.path)", "REACHD_SOCKET=\(network.socketPath)",
             "G_MESSAGES_DEBUG=GLib-GIO", "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c",
             "from gi.repository import Gio; Gio.NetworkMonitor.get_default()"])
        // GLib writes debug messages to standard output.
        #expect(why.output.contains("Failed to initialize reachd (ReachdNetworkMonitor) for gio-network-monitor")
                && why.output.contains("start reachd"), "\(why.output)\(why.error)")

        let daemon = try await network.startDaemon()
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor")
        #expect(app.ready.available && app.ready.connectivity == "full" && !app.ready.metered, "\(app.ready)")
        // The module by its priority alone, and the README's one-liner.
        let which = try await Subprocess.run(
            ["/usr/bin/env", "GIO_EXTRA_MODULES=\(GLibApp.moduleDirectory.path)", "REACHD_SOCKET=\(network.socketPath)",
             "ip", "netns", "exec", network.host, "/usr/bin/python3", "-c",
             "from gi.repository import Gio; print(Gio.NetworkMonitor.get_default().__gtype__.name)"])
        #expect(which.output == "ReachdNetworkMonitor\n", "\(which.output)\(which.error)")
        _ = daemon
    }

    /// A daemon connected but silent when the app starts: one starting under
    /// socket activation on a loaded machine (at boot, when apps start too),
    /// or stopped, as here. Init waits its 250 ms, and the app has reachd's
    /// monitor all the same, answering from GLib's own backend (netlink's:
    /// available, never metered) until the daemon speaks; then the daemon's
    /// word, its `[metered]` override, is one signal. Failing init left the
    /// app on GLib's backend for its whole life (seen in CI: the packaged
    /// daemon, socket-activated by a GLib program, took over 250 ms).
    @Test func aDaemonSilentWhenTheAppStartsIsFollowedOnceItSpeaks() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await Self.meteredDaemon(in: network)
        defer { daemon.signal(SIGCONT) }
        daemon.signal(SIGSTOP)
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor", "\(app.ready)")
        #expect(app.ready.available && app.ready.connectivity == "full" && !app.ready.metered, "GLib's backend: \(app.ready)")
        let chosen = app.ready.chosenMs ?? .infinity
        // At least the deadline (the module waited), and not much more: a
        // second's margin for a loaded machine, where no deadline means for ever.
        #expect(chosen >= 240 && chosen < 1250, "chosen after \(chosen) ms")

        daemon.signal(SIGCONT)
        let spoke = try await app.signal(1, "the daemon's first status")
        #expect(spoke.available && spoke.metered, "the daemon's word, metered by its override: \(spoke)")
        #expect(try await holdsThroughout(.milliseconds(300)) { app.signals.count == 1 },
                "\(app.signals.map { ($0.available, $0.metered) })")
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
    }

    /// A default route that goes and comes, a carrier lost and found, a
    /// default route only a policy rule reaches, and IPv6 coming up beside
    /// IPv4 (GLib's contract: a change of configuration, although the three
    /// properties stay): each is one signal with the properties already
    /// changed; a 200,000-change route flood is none.
    @Test func changesReachTheAppAsOneSignalEach() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        // IPv6's address from the start: its default route alone comes
        // later, one change (an address and a route as two commands are
        // two statuses on a loaded machine).
        try await network.inHost("-6 addr add fd77::2/64 dev vh nodad")
        let daemon = try await network.startDaemon()
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.available)

        try await network.inHost("route del default")
        let down = try await app.signal(1, "the default route's removal")
        #expect(down.argument == false && !down.available && down.connectivity == "local", "\(down)")
        #expect(app.events.contains { $0.event == "notify" && $0.property == "network-available" })

        try await network.inHost("route add default via 10.77.0.1")
        let up = try await app.signal(2, "the default route's return")
        #expect(up.argument == true && up.connectivity == "full", "\(up)")

        try await network.inGateway("link set vg down")
        let noCarrier = try await app.signal(3, "the carrier's loss")
        #expect(noCarrier.argument == false, "\(noCarrier)")
        try await network.inGateway("link set vg up")
        #expect(try await app.signal(4, "the carrier's return").argument == true)

        try await network.inHost("route del default")
        #expect(try await app.signal(5, "offline again").argument == false)
        try await network.inHost("route add default via 10.77.0.1 table 100", "rule add lookup 100 priority 100")
        #expect(try await app.signal(6, "the policy-routed default").argument == true)

        // IPv6 coming up beside IPv4 leaves the app's three properties, and
        // is still a change of configuration: one signal.
        try await network.inHost("-6 route add default via fd77::1")
        let ipv6 = try await app.signal(7, "IPv6 beside IPv4")
        #expect(ipv6.argument == true && ipv6.connectivity == "full", "\(ipv6)")
        let routes = (0..<100_000).map { "10.\(100 + $0 / 65536).\($0 / 256 % 256).\($0 % 256)/32" }
        try await network.batchInHost(
            routes.map { "route add \($0) via 10.77.0.1 table 300" } + routes.map { "route del \($0) table 300" })
        // A change that signals, to know the flood has been read past.
        try await network.inHost("-6 route del default")
        let marker = try await app.signal(8, "IPv6's way out gone, after the flood", timeout: .seconds(60))
        #expect(marker.argument == true)
        #expect(app.signals.count == 8, "one signal per change: \(app.signals.map(\.argument))")
        _ = daemon
    }

    /// An app whose daemon publishes each change asks the daemon nothing
    /// more: the news is its proof of life. Each change cost the daemon a
    /// connection and an answer per GLib app before. As for reachd's own
    /// clients (QuietClientTests.connectionsAccepted), a change heard after
    /// its news was queued is asked about, which load makes happen.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (make test installs it)"))
    func anAppFollowingTheDaemonAsksItNothingWhileItsNewsFlows() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor")
        let changes = QuietClientTests.newsChanges
        let (accepted, calls) = try await QuietClientTests.connectionsAccepted(by: daemon, in: network) { change in
            _ = try await app.signal(change, "change \(change)")
        }
        // Asked at every change, it was every one.
        #expect(accepted <= changes / 2, "the app connected to the daemon again, \(accepted) times of \(changes): \(calls)")
    }

    /// reachd's connectivity check reaches the app as GLib's words for it:
    /// a captive portal is PORTAL, signing in makes it FULL, a dead uplink
    /// is LIMITED; the network stays available through all three (its
    /// routes do not change), and each is one signal.
    @Test func theConnectivityCheckShowsAsPortalFullAndLimited() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let server = try await CheckServer(
            in: network, answering: .init(status: 302, headers: ["Location": "http://portal.example/login"]))
        let daemon = try await network.startDaemon(["--check-url", server.url])
        _ = try await network.waitForStatus("the portal") { $0.connectivity == .portal }
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor")
        #expect(app.ready.connectivity == "portal" && app.ready.available, "\(app.ready)")

        try server.answering(.init(status: 204))
        _ = try await network.reachd("check", "--socket", network.socketPath)
        let signedIn = try await app.signal(1, "signed in")
        #expect(signedIn.connectivity == "full" && signedIn.available, "\(signedIn)")

        try await server.stop()
        _ = try await network.reachd("check", "--socket", network.socketPath)
        let dead = try await app.signal(2, "the uplink dead")
        #expect(dead.connectivity == "limited" && dead.available, "\(dead)")

        // Still limited, for another reason (refused, then no answer): the
        // status says why, and GLib's connectivity is the same: no signal.
        try await TestNetwork.sh(
            "ip netns exec \(network.gateway) nft 'add table inet reachd_quiet; "
                + "add chain inet reachd_quiet in { type filter hook input priority 0; }; "
                + "add rule inet reachd_quiet in tcp dport \(server.port) drop'")
        _ = try await network.reachd("check", "--socket", network.socketPath)
        _ = try await network.waitForStatus("limited, unanswered") { $0.connectivityReason == .noAnswer }
        try await TestNetwork.sh("ip netns exec \(network.gateway) nft delete table inet reachd_quiet")
        try await server.start()
        _ = try await network.reachd("check", "--socket", network.socketPath)
        let back = try await app.signal(3, "the uplink back")
        #expect(back.connectivity == "full", "\(back)")
        #expect(app.signals.count == 3, "one signal per verdict: \(app.signals)")
        _ = daemon
    }

    /// An interface reachd.conf calls metered, on the primary path: GLib's
    /// `network-metered` (which GNOME Software and PackageKit heed). Without
    /// the override a veth is not metered (the first test).
    @Test func aMeteredOverrideShowsAsNetworkMetered() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await Self.meteredDaemon(in: network)
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor")
        #expect(app.ready.metered && app.ready.available, "\(app.ready)")
        // No way out, no primary path to be metered: one signal for both.
        try await network.inHost("route del default")
        let offline = try await app.signal(1, "offline")
        #expect(!offline.metered && !offline.available, "\(offline)")
        #expect(app.events.contains { $0.event == "notify" && $0.property == "network-metered" })
        _ = daemon
    }

    /// A daemon stopped after init (SIGSTOP): the app follows a default
    /// route going within 1.5 s (3 s allowed), through GLib's own netlink
    /// backend, and is back on the daemon's word once it resumes, with one
    /// signal per real change and none for the switches. The daemon's
    /// `[metered]` override tells its word from GLib's backend, which never
    /// says metered.
    @Test func aStoppedDaemonsAppFollowsGLibsBackendAndReturnsToTheDaemon() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await Self.meteredDaemon(in: network)
        defer { daemon.signal(SIGCONT) }
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor" && app.ready.available && app.ready.metered, "\(app.ready)")

        daemon.signal(SIGSTOP)
        try await network.inHost("route del default")
        let changed = ContinuousClock.now
        let offline = try await app.signal(1, "the route's removal, with the daemon stopped")
        // 1.5 s promised, and GLib's backend to make; counted from the change
        // made (starting `ip` took over 0.3 s under make test's load), with
        // a margin for that load. Never noticed, it would time out at 10 s.
        #expect(ContinuousClock.now - changed < .seconds(3), "noticed within 3 s: \(ContinuousClock.now - changed)")
        #expect(!offline.available && !offline.metered, "\(offline)")

        daemon.signal(SIGCONT)
        // The daemon's own offline state: the same, so no signal; then a
        // change it alone would call metered.
        _ = try await daemonAnswers(at: network.socketPath)
        try await network.inHost("route add default via 10.77.0.1")
        let online = try await app.signal(2, "the route back, from the daemon")
        #expect(online.available && online.metered, "the daemon's word, metered by its override: \(online)")
        #expect(app.signals.count == 2, "one per real change: \(app.signals.map { ($0.available, $0.metered) })")
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
    }

    /// GLib's NetworkManager backend asks NetworkManager for its properties
    /// over D-Bus, and waits; made on the app's main thread when the daemon
    /// stalled, it held the app's main loop that long (seconds, with a
    /// NetworkManager busy at boot). Here a stand-in on a bus of its own
    /// takes a second per property: the app's loop never waits 50 ms, and
    /// the app then follows what the stand-in says (connected to the site
    /// only: limited).
    @Test func switchingToGLibsBackendNeverBlocksTheAppsMainLoop() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let (address, networkManager, bus) = try await Self.networkManager(in: network, delay: 1)
        defer { networkManager.signal(SIGTERM); bus.signal(SIGTERM) }
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        let app = try await GLibApp(in: network, socket: network.socketPath, environment: [address])
        #expect(app.ready.type == "ReachdNetworkMonitor" && app.ready.connectivity == "full", "\(app.ready)")
        try app.send("heartbeat")

        daemon.signal(SIGSTOP)
        try await network.inHost("route add 10.200.0.0/16 via 10.77.0.1")
        _ = try await eventually("the app follows GLib's backend, made from NetworkManager's properties", timeout: .seconds(10)) {
            app.events.contains { $0.event == "notify" && $0.property == "connectivity" && $0.connectivity == "limited" } ? true : nil
        }
        #expect(networkManager.outputLines.contains("asked State"), "\(networkManager.outputLines)")
        let longest = try await app.longestWait()
        #expect(longest < 50, "the app's main loop waited \(longest) ms")
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
    }

    /// Init with a silent daemon waits for GLib's backend, but not for ever:
    /// a NetworkManager busy at boot (the stand-in takes 3 s per property)
    /// holds the app's start to the module's 250 ms and a second more, with
    /// what GLib's base monitor assumes (available, full), and the app then
    /// follows what NetworkManager says (connected to the site: limited).
    /// Unbounded, init would hang for good where the app's thread holds a
    /// lock that making the backend needs.
    @Test func initWaitsForGLibsBackendASecondAtMost() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let (address, networkManager, bus) = try await Self.networkManager(in: network, delay: 3)
        defer { networkManager.signal(SIGTERM); bus.signal(SIGTERM) }
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        daemon.signal(SIGSTOP)
        let app = try await GLibApp(in: network, socket: network.socketPath, environment: [address])
        #expect(app.ready.type == "ReachdNetworkMonitor" && app.ready.available && app.ready.connectivity == "full",
                "\(app.ready)")
        let chosen = app.ready.chosenMs ?? .infinity
        // 250 ms and a second; a second's margin for a loaded machine, where
        // waiting for the stand-in takes three at least.
        #expect(chosen >= 1200 && chosen < 2250, "chosen after \(chosen) ms")
        _ = try await eventually("the app follows NetworkManager's word once its backend is made", timeout: .seconds(20)) {
            app.events.contains { $0.event == "notify" && $0.property == "connectivity" && $0.connectivity == "limited" } ? true : nil
        }
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
    }

    /// A change that leaves the network as it was, while the daemon is
    /// stopped: the module notices the stop, and GLib's netlink backend
    /// (which knows routes alone, so never metered) takes over without a
    /// signal, the daemon's metered standing; the daemon's return is no
    /// signal either. The review found two spurious signals here.
    @Test func aStopThatChangesNothingIsNoSignal() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await Self.meteredDaemon(in: network)
        defer { daemon.signal(SIGCONT) }
        let app = try await GLibApp(in: network, socket: network.socketPath, environment: [GLibApp.moduleDebug])
        #expect(app.ready.type == "ReachdNetworkMonitor" && app.ready.available && app.ready.metered, "\(app.ready)")
        let fallbacks = app.fallbacks
        daemon.signal(SIGSTOP)
        try await network.inHost("route add 10.200.0.0/16 via 10.77.0.1")
        // The stop is noticed a second after the change (the question's deadline).
        try await app.fallsBackToGLibsBackend(after: fallbacks)
        #expect(try await holdsThroughout(.milliseconds(500)) { app.signals.isEmpty }, "GLib's backend moved no property")
        daemon.signal(SIGCONT)
        _ = try await daemonAnswers(at: network.socketPath)
        try await network.inHost("route add 10.201.0.0/16 via 10.77.0.1")
        #expect(try await holdsThroughout(.milliseconds(1500)) { app.signals.isEmpty },
                "no signal for either switch: \(app.signals.map { ($0.available, $0.metered) })")
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
    }

    /// A handover while the daemon is stopped: GLib's netlink backend,
    /// answering meanwhile, moves none of the three properties, so the
    /// module passes nothing on; the daemon's return says the handover, and
    /// that is one signal (the review found none).
    @Test func aHandoverWhileTheDaemonIsStoppedIsOneSignalOnItsReturn() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon()
        defer { daemon.signal(SIGCONT) }
        let app = try await GLibApp(in: network, socket: network.socketPath, environment: [GLibApp.moduleDebug])
        #expect(app.ready.type == "ReachdNetworkMonitor" && app.ready.available, "\(app.ready)")
        let fallbacks = app.fallbacks
        daemon.signal(SIGSTOP)
        try await network.inHost("route replace default via 10.77.0.254")
        // The stop is noticed a second after the change (the question's deadline).
        try await app.fallsBackToGLibsBackend(after: fallbacks)
        #expect(try await holdsThroughout(.milliseconds(500)) { app.signals.isEmpty },
                "GLib's backend moved no property: \(app.signals.count)")
        daemon.signal(SIGCONT)
        let handover = try await app.signal(1, "the handover, from the daemon back")
        #expect(handover.available && handover.connectivity == "full", "\(handover)")
        #expect(try await holdsThroughout(.milliseconds(1500)) { app.signals.count == 1 }, "one signal: \(app.signals.count)")
    }

    /// A status line from a daemon of another network namespace.
    static let otherNetworksLine = FakeDaemon.newerDaemonsLine.replacingOccurrences(
        of: #""online":true"#, with: #""netns":{"inode":1,"device":1,"cookie":1},"online":true"#)

    /// A daemon at the module's path that turns out to serve another
    /// network (its restart's first status says so) is not asked again: no
    /// reconnection timer runs for ever, and GLib's own backend answers.
    @Test func aDaemonFoundToServeAnotherNetworkIsNotAskedAgain() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let fake = try FakeDaemon(answeringInTurn: [FakeDaemon.newerDaemonsLine, Self.otherNetworksLine])
        let app = try await GLibApp(in: network, socket: fake.path)
        #expect(app.ready.type == "ReachdNetworkMonitor" && app.ready.available, "\(app.ready)")
        // The fake hangs up: the module reconnects, and meets another network.
        let offline = try await app.signal(1, "GLib's backend: this namespace has no default route")
        #expect(!offline.available, "\(offline)")
        #expect(try await holdsThroughout(.seconds(3)) { fake.connections == 2 }, "asked again \(fake.connections - 2) times")
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
    }

    /// A daemon silent at init's 250 ms whose first status then names another
    /// network (its socket reached the app through a shared filesystem):
    /// the app, on GLib's backend meanwhile, stays on it for good. It
    /// follows its own network (no default route, then one), with one
    /// signal for the one change, and the daemon is not asked again.
    @Test func aSilentDaemonOfAnotherNetworkLeavesTheAppOnGLibsBackend() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        let fake = try FakeDaemon(answeringInTurn: [Self.otherNetworksLine], after: .milliseconds(600))
        let app = try await GLibApp(in: network, socket: fake.path)
        #expect(app.ready.type == "ReachdNetworkMonitor", "\(app.ready)")
        // GLib's backend, made within init's wait (1 s), says no default
        // route at once; made later (a loaded machine), the module starts
        // from GLib's base assumption (available) and its one signal
        // corrects that.
        var settled = 0
        if app.ready.available {
            settled = 1
            #expect(try await app.signal(1, "GLib's backend, made after init").available == false)
        }
        #expect(try await holdsThroughout(.seconds(1)) { app.signals.count == settled },
                "the other network's status changed nothing: \(app.signals)")
        try await network.inHost("route add default via 10.77.0.1")
        let online = try await app.signal(settled + 1, "this network's default route, from GLib's backend")
        #expect(online.available, "\(online)")
        #expect(try await holdsThroughout(.seconds(2)) { fake.connections == 1 }, "asked again \(fake.connections - 1) times")
        #expect(app.signals.count == settled + 1 && app.process.isRunning, "\(app.signals) \(app.process.errorOutput)")
    }

    /// A daemon that subscribes with a status, answers `get` with `lines`,
    /// and says every destination asked of it is reachable.
    static func reachable(answeringGet lines: [String]) -> ScriptedDaemon.Responder {
        { _, line in
            let request = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
            switch request["op"] as? String {
            case "subscribe": return [FakeDaemon.newerDaemonsLine]
            case "get": return lines
            case "reach":
                return [#"{"type":"destination","version":1,"id":"\#(request["id"] as? String ?? "")","target":"10.99.1.1:443","host":"10.99.1.1","port":443,"state":"reachable","reason":null,"via":null,"addresses":[],"seq":1,"source":"daemon"}"#]
            default: return []
            }
        }
    }

    /// can_reach asks for a status before its questions: another network's
    /// daemon's answers about a destination do not count.
    @Test func canReachAsksOnlyADaemonOfThisNetwork() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try ScriptedDaemon(respond: Self.reachable(answeringGet: [Self.otherNetworksLine]))
        let app = try await GLibApp(in: network, socket: daemon.path)
        #expect(app.ready.type == "ReachdNetworkMonitor", "\(app.process.errorOutput)")
        let answer = try await app.reach("10.99.1.1:443")
        #expect(answer.reachable == false && answer.message?.contains("serves another network namespace") == true,
                "\(answer)")
    }

    /// A newer daemon may say something this version does not know before
    /// its status: that is no answer, and no sign of another network; the
    /// daemon is asked again, its status still decides.
    @Test func aLineOfAKindUnknownBeforeTheStatusIsNoOtherNetwork() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let greeting = #"{"type":"greeting","version":1,"from":"a newer daemon"}"#
        let daemon = try ScriptedDaemon(respond: Self.reachable(answeringGet: [greeting, FakeDaemon.newerDaemonsLine]))
        let app = try await GLibApp(in: network, socket: daemon.path)
        #expect(app.ready.type == "ReachdNetworkMonitor", "\(app.process.errorOutput)")
        for _ in 0..<2 {
            let answer = try await app.reach("10.99.1.1:443")
            #expect(answer.reachable == true, "\(answer)")
        }
    }

    /// can_reach asks the daemon's route lookup for the app's destination:
    /// an intranet server is reachable on a host with no default route, a
    /// blackholed prefix is not; sync and async alike.
    @Test(arguments: [false, true])
    func canReachAnswersForTheDestination(async: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1", "route add blackhole 10.98.0.0/16")
        let daemon = try await network.startDaemon()
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor" && !app.ready.available)

        let intranet = try await app.reach("10.99.1.1:443", async: async)
        #expect(intranet.reachable == true, "\(intranet)")
        let blackholed = try await app.reach("10.98.1.1:443", async: async)
        #expect(blackholed.reachable == false && blackholed.error == "host-unreachable", "\(blackholed)")
        #expect(blackholed.message?.contains("blackhole_route") == true, "\(blackholed)")
        let nowhere = try await app.reach("192.0.2.1:443", async: async)
        #expect(nowhere.reachable == false && nowhere.error == "network-unreachable", "\(nowhere)")
        #expect(app.process.isRunning)
        _ = daemon
    }

    /// A GNetworkService: its SRV records name the server, and the daemon is
    /// asked about that server's name and port (resolving the name itself);
    /// sync and async alike.
    @Test(arguments: [false, true])
    func canReachFollowsAServicesRecordsToItsServer(async: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1", "route add 10.53.0.53/32 via 10.77.0.1",
                                 "route add blackhole 10.98.0.0/16")
        let nameServer = try await NameServer(in: network, records: [
            "_api._tcp.intranet.test": "api.intranet.test:8443", "api.intranet.test": "10.99.1.1",
            "_old._tcp.intranet.test": "old.intranet.test:8443", "old.intranet.test": "10.98.1.1",
        ])
        let etc = try nameServer.isTheResolver(of: network)
        defer { try? FileManager.default.removeItem(at: etc) }
        let daemon = try await network.startDaemon()
        let app = try await GLibApp(in: network, socket: network.socketPath)

        let reachable = try await app.reachService("api", "tcp", "intranet.test", async: async)
        #expect(reachable.reachable == true, "\(reachable)")
        let blackholed = try await app.reachService("old", "tcp", "intranet.test", async: async)
        #expect(blackholed.reachable == false && blackholed.error == "host-unreachable", "\(blackholed)")
        #expect(blackholed.message?.contains("old.intranet.test:8443") == true, "\(blackholed)")
        _ = (daemon, nameServer)
    }

    /// RFC 2782's "no such service" SRV answer (the target `.`), for which
    /// GLib's resolver gives no target and no error: the module never called
    /// back, and GLib logged a CRITICAL, fatal under
    /// `G_DEBUG=fatal-criticals`. It now answers as GLib's own monitor does.
    @Test(arguments: [false, true])
    func aServiceWithNoTargetIsAnsweredAsGLibAnswersIt(async: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: false)
        try await network.inHost("route add 10.53.0.53/32 via 10.77.0.1")
        let nameServer = try await NameServer(in: network, records: ["_none._tcp.intranet.test": ".:0"])
        let etc = try nameServer.isTheResolver(of: network)
        defer { try? FileManager.default.removeItem(at: etc) }
        let daemon = try await network.startDaemon()
        let fatal = ["G_DEBUG=fatal-criticals"]
        let glib = try await GLibApp(in: network, socket: network.socketPath, environment: fatal + ["GIO_USE_NETWORK_MONITOR=netlink"])
        let expected = try await glib.reachService("none", "tcp", "intranet.test", async: async)
        let app = try await GLibApp(in: network, socket: network.socketPath, environment: fatal)
        #expect(app.ready.type == "ReachdNetworkMonitor", "the module answers, not GLib's backend: \(app.process.errorOutput)")
        let answer = try await app.reachService("none", "tcp", "intranet.test", async: async)
        #expect(answer.reachable == expected.reachable && answer.error == expected.error,
                "reachd's module: \(answer); GLib's own: \(expected)")
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
        _ = (daemon, nameServer)
    }

    /// What reachd never sends counts as no daemon, and never harms the app:
    /// it gets GLib's netlink backend. A status made longer than the 64 KiB a
    /// line may have, bytes that are not JSON, another protocol version, a refusal, a status followed by
    /// bytes that are not JSON. (A status and then the end of the stream is
    /// a daemon that answered: the next test.)
    @Test(arguments: [
        FakeDaemon.newerDaemonsLine.replacingOccurrences(
            of: #""online":true"#, with: #""online":true,"padding":"\#(String(repeating: "x", count: 70_000))""#),
        "{\"type\":\"status\",", #"{"type":"status","version":2}"#,
        FakeDaemon.refusing, FakeDaemon.newerDaemonsLine + "\nnot json",
    ])
    func whatReachdNeverSendsCountsAsNoDaemon(answer: String) async throws {
        let network = try await TestNetwork()
        let fake = try FakeDaemon(answering: answer)
        let app = try await GLibApp(in: network, socket: fake.path)
        // The fake is a thread of this test process; in make test's first
        // storm (every suite at once) it once answered after init's 250 ms,
        // and the module, as it should with a daemon silent at init,
        // followed it while GLib's backend answered, rejecting each line.
        // Either way the line is never taken and the app is unharmed.
        if app.ready.type == "GNetworkMonitorNetlink" {
            #expect(fake.connections == 1, "the module asked once")
        } else {
            withKnownIssue("the fake daemon was silent at init's 250 ms under make test's load", isIntermittent: true) {
                #expect(app.ready.type == "GNetworkMonitorNetlink", "\(app.process.errorOutput)")
            }
            #expect(app.ready.type == "ReachdNetworkMonitor" && fake.connections >= 1, "\(app.ready)")
        }
        #expect(app.process.isRunning)
    }

    /// A status that names no network namespace (a daemon before 0.7, or
    /// one that is not reachd) proved nothing, and the module took it as
    /// its own network's: it is no daemon now.
    @Test func aStatusNamingNoNamespaceCountsAsNoDaemon() async throws {
        let network = try await TestNetwork()
        let fake = try FakeDaemon(answering: FakeDaemon.newerDaemonsLine, namingNamespace: false)
        let app = try await GLibApp(in: network, socket: fake.path)
        #expect(app.ready.type == "GNetworkMonitorNetlink", "\(app.process.errorOutput)")
        // Taken as its own network's, a daemon that hangs up after each line
        // would be asked again within the second; taken as no daemon, never.
        #expect(try await holdsThroughout(.seconds(2)) { fake.connections == 1 }, "asked once, never again")
    }

    /// A verdict the module has never seen, from a newer daemon: the
    /// daemon's own `online` stands (it knows the value); without it, what
    /// cannot be judged is not full.
    @Test(arguments: [(#""online":true"#, "full"), (#""online":false"#, "limited"), ("", "limited")])
    func aNewerDaemonsVerdictStandsWhereTheModuleCannotJudge(online: String, connectivity: String) async throws {
        let network = try await TestNetwork()
        let line = FakeDaemon.newerDaemonsLine
            .replacingOccurrences(of: #""connectivity":"unknown""#, with: #""connectivity":"captive_with_grace""#)
            .replacingOccurrences(of: #""online":true,"#, with: online.isEmpty ? "" : online + ",")
        let fake = try FakeDaemon(answering: line)
        let app = try await GLibApp(in: network, socket: fake.path)
        #expect(app.ready.type == "ReachdNetworkMonitor", "\(app.process.errorOutput)")
        _ = try await app.settles("the daemon's verdict") { $0.available && $0.connectivity == connectivity }
    }

    /// A level the module has never seen, in the families and in
    /// `reachability`: the daemon's `online` says a family is online by
    /// routes, as the library reads it (the review found the module
    /// reading "local" where the library read "online").
    @Test(arguments: [(true, true, "full"), (false, false, "local")])
    func aNewerDaemonsLevelStandsWhereTheModuleCannotJudge(online: Bool, available: Bool, connectivity: String) async throws {
        let network = try await TestNetwork()
        // GLib's backend, which answers first where the fake is late, is to
        // say the opposite of the daemon's word, so that only that settles.
        try await network.bringUpIPv4(defaultRoute: !available)
        let line = FakeDaemon.newerDaemonsLine
            .replacingOccurrences(of: #""ipv4":"online""#, with: #""ipv4":"satellite""#)
            .replacingOccurrences(of: #""reachability":"online","seq""#, with: #""reachability":"satellite","seq""#)
            .replacingOccurrences(of: #""online":true,"#, with: #""online":\#(online),"#)
        #expect(line.contains(#""reachability":"satellite""#) && line.contains(#""ipv4":"satellite""#))
        let fake = try FakeDaemon(answering: line)
        let app = try await GLibApp(in: network, socket: fake.path)
        #expect(app.ready.type == "ReachdNetworkMonitor", "\(app.process.errorOutput)")
        _ = try await app.settles("the daemon's level") { $0.available == available && $0.connectivity == connectivity }
    }

    /// Names that cannot resolve (`dns` failing, or no name server routable)
    /// are GLib's LIMITED where the module would say FULL, as GLib's
    /// NetworkManager backend says (its check resolves a name first); a
    /// portal stays a portal, and `none` (glibc then asks the host itself)
    /// and a state a newer daemon sends change nothing.
    @Test(arguments: [
        ("failing", "unknown", "limited"), ("unroutable", "unknown", "limited"), ("failing", "portal", "portal"),
        ("none", "unknown", "full"), ("ok", "unknown", "full"), ("degraded_by_a_newer_daemon", "unknown", "full"),
    ])
    func namesThatCannotResolveAreLimited(dns: String, verdict: String, connectivity: String) async throws {
        let network = try await TestNetwork()
        let line = FakeDaemon.newerDaemonsLine.replacingOccurrences(
            of: #""connectivity":"unknown""#, with: #""connectivity":"\#(verdict)","dns":{"state":"\#(dns)","servers":[]}"#)
        let fake = try FakeDaemon(answering: line)
        let app = try await GLibApp(in: network, socket: fake.path)
        #expect(app.ready.type == "ReachdNetworkMonitor", "\(app.process.errorOutput)")
        _ = try await app.settles("the daemon's names") { $0.available && $0.connectivity == connectivity }
    }

    /// The route to the only name server blackholed while the host stays
    /// online: one signal, LIMITED and still available; the route back, one
    /// more, FULL. Judged by the daemon from the kernel's routes.
    @Test func aNameServerWithoutARouteIsLimitedUntilItHasOne() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let etc = try await DestinationReachabilityTests.resolverFiles(network, hosts: nil, nameServer: NameServer.address)
        let daemon = try await network.startDaemon(etc: etc)
        let app = try await GLibApp(in: network, socket: network.socketPath)
        #expect(app.ready.type == "ReachdNetworkMonitor" && app.ready.available && app.ready.connectivity == "full",
                "\(app.ready)")
        try await network.inHost("route add unreachable \(NameServer.address)/32")
        let unroutable = try await app.signal(1, "no route to the name server")
        #expect(unroutable.available && unroutable.connectivity == "limited", "\(unroutable)")
        try await network.inHost("route del unreachable \(NameServer.address)/32")
        let routable = try await app.signal(2, "the name server routable again")
        #expect(routable.available && routable.connectivity == "full", "\(routable)")
        #expect(try await holdsThroughout(.milliseconds(300)) { app.signals.count == 2 },
                "one per change: \(app.signals.map { ($0.available, $0.connectivity) })")
        _ = daemon
    }

    /// A status and then the end of the stream is a daemon that answered,
    /// however the bytes arrive. The bad bytes that come after it, on each
    /// reconnection, count as the daemon going away: the app keeps the state
    /// it had, with no signal, and asks again with backoff, not in a loop.
    @Test func badBytesAfterInitKeepTheStateAndBackOff() async throws {
        let network = try await TestNetwork()
        let fake = try FakeDaemon(answeringInTurn: [
            FakeDaemon.newerDaemonsLine, String(repeating: "x", count: 100_000), "{\"type\":\"status\",",
            #"{"type":"status","version":2}"#, "\u{1b}]0;owned\u{7}\u{0}\u{ff}",
        ])
        let app = try await GLibApp(in: network, socket: fake.path)
        #expect(app.ready.type == "ReachdNetworkMonitor" && app.ready.available, "\(app.ready)")
        _ = try await eventually("every kind of bad bytes sent", timeout: .seconds(10)) {
            fake.connections >= 6 ? true : nil
        }
        // The backoff doubles from 100 ms: by 3 s at most 6 more tries.
        #expect(try await holdsThroughout(.seconds(2)) { fake.connections <= 12 }, "asked \(fake.connections) times")
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
        #expect(app.signals.isEmpty && app.events.allSatisfy { $0.available && $0.connectivity == "full" },
                "\(app.events.map(\.event))")
    }

    /// The module's whole life in a GLib program (module-lifecycle.c) under
    /// valgrind's memcheck: init, can_reach sync and async, a change, and
    /// the monitor finalized behind an async can_reach. No invalid access,
    /// no definite leak. Once as it goes, and once with the daemon stopped
    /// before the change: GLib's backend is made, followed, asked, and
    /// released with the monitor.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/valgrind"),
                   "needs valgrind (make test installs it)"),
          arguments: [false, true])
    func theModulesWholeLifeIsCleanUnderMemcheck(daemonStopped: Bool) async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        try await network.inHost("route add 10.99.0.0/16 via 10.77.0.1", "route add blackhole 10.98.0.0/16")
        let daemon = try await network.startDaemon()
        let source = GLibApp.script.deletingLastPathComponent().appendingPathComponent("module-lifecycle.c").path
        let program = network.directory.appendingPathComponent("module-lifecycle").path
        let built = try await Subprocess.run([
            "/bin/sh", "-c", "cc -g -O0 -Wall -Werror -o \"$1\" \"$0\" $(pkg-config --cflags --libs gio-2.0)",
            source, program,
        ])
        try #require(built.status == 0, "\(built.error)")
        let report = network.directory.appendingPathComponent("memcheck.log").path
        let run = try Subprocess(
            ["/usr/bin/env", "GIO_EXTRA_MODULES=\(GLibApp.moduleDirectory.path)", "GIO_USE_NETWORK_MONITOR=reachd",
             "REACHD_SOCKET=\(network.socketPath)",
             // GLib 2.74 still hands out GObjects from slices, where memcheck sees neither leak nor reuse.
             "G_SLICE=always-malloc", "G_DEBUG=gc-friendly", "ip", "netns", "exec", network.host,
             "/usr/bin/valgrind", "--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite",
             "--errors-for-leak-kinds=definite", "--num-callers=40", "--error-exitcode=99", "--log-file=\(report)",
             program, "10.99.1.1", "10.98.1.1"])
        _ = try await eventually("the program waits for a change", timeout: .seconds(60)) { () -> Bool? in
            guard run.isRunning || run.outputLines.contains("ready") else {
                throw HarnessError.commandFailed("it exited: \(run.output)\(run.errorOutput)")
            }
            return run.outputLines.contains("ready") ? true : nil
        }
        if daemonStopped { daemon.signal(SIGSTOP) }
        defer { daemon.signal(SIGCONT) }
        try await network.inHost("route del default")
        let status = try await run.wait(timeout: .seconds(60))
        let memcheck = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        #expect(run.outputLines == [
            "ok can_reach", "ok can_reach_async: 10.98.1.1:443 is unreachable: blackhole_route", "ready",
            "ok network-changed to unavailable", "ok can_reach_async", "ok finalized",
        ], "\(run.output)\(run.errorOutput)")
        #expect(status == 0 && memcheck.contains("ERROR SUMMARY: 0 errors"), "\(memcheck.suffix(6000))")
        _ = daemon
    }

    /// A daemon that answers every subscription with a status and hangs up
    /// at once: asked again with backoff all the same, never in a loop on
    /// the app's main loop, and no signal (its status never changes).
    @Test func aDaemonThatAnswersAndHangsUpIsAskedWithBackoff() async throws {
        let network = try await TestNetwork()
        let fake = try FakeDaemon(answering: FakeDaemon.newerDaemonsLine)
        let app = try await GLibApp(in: network, socket: fake.path)
        #expect(app.ready.type == "ReachdNetworkMonitor", "\(app.ready)")
        // Backoff from 100 ms: about 7 in 3 s; at once each time: thousands.
        #expect(try await holdsThroughout(.seconds(3)) { fake.connections <= 12 }, "asked \(fake.connections) times")
        #expect(fake.connections >= 3, "asked \(fake.connections) times")
        #expect(app.signals.isEmpty && app.process.isRunning, "\(app.process.errorOutput)")
    }

    /// The daemon killed under the app and started again: the app keeps its
    /// state through the restart without a signal, then follows again.
    @Test func aKilledDaemonIsFollowedAgainWithoutAFlap() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        var daemon = try await network.startDaemon()
        let app = try await GLibApp(in: network, socket: network.socketPath)
        daemon.signal(SIGKILL)
        _ = try await daemon.wait()
        daemon = try await network.startDaemon()
        _ = try await eventually("the app's subscription to the new daemon", timeout: .seconds(15)) {
            try await network.connections(to: network.socketPath) > 0 ? true : nil
        }
        #expect(app.signals.isEmpty, "the new daemon's first status changed nothing")
        try await network.inHost("route del default")
        let down = try await app.signal(1, "the change, from the new daemon", timeout: .seconds(15))
        #expect(down.argument == false)
        #expect(app.signals.count == 1, "the restart itself signals nothing")
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
        _ = daemon
    }

    /// A daemon gone with its socket (stopped, no socket unit holding its
    /// place): the app waits for it on a watch of where the socket would
    /// appear, with no system calls over longer than the 5 s its retries
    /// were capped at (it tried every 5 s for as long as it ran), and
    /// follows it once it starts again.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (make test installs it)"))
    func anAppWaitsForAGoneDaemonWithoutATimer() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        var daemon = try await network.startDaemon()
        let app = try await GLibApp(in: network, socket: network.socketPath)
        daemon.signal(SIGTERM)
        _ = try await daemon.wait()
        try await QuietClientTests.settled(app.process.pid)
        let calls = try await QuietClientTests.systemCalls(of: app.process.pid, seconds: 6)
        #expect(calls.isEmpty, "an app waiting for a daemon that is gone woke:\n\(calls.joined(separator: "\n"))")

        daemon = try await network.startDaemon()
        _ = try await eventually("the app's subscription to the new daemon") {
            try await network.connections(to: network.socketPath) > 0 ? true : nil
        }
        try await network.inHost("route del default")
        let down = try await app.signal(1, "the change, from the daemon")
        #expect(down.argument == false && app.signals.count == 1, "\(app.signals)")
        #expect(app.process.isRunning, "\(app.process.errorOutput)")
        _ = daemon
    }
}
