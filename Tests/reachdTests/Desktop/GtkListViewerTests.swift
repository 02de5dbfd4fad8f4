import Foundation
import Testing
import ReachabilityPlaceholders
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Where the GTK example is: `REACHD_GTK_VIEWER` (make test sets it, so that
/// a missing build fails rather than skips), else its package's debug build.
enum GtkViewer {
    static let binary = ProcessInfo.processInfo.environment["REACHD_GTK_VIEWER"]
        ?? packageRoot.appendingPathComponent("Examples/GtkListViewer/.build/debug/gtk-list-viewer").path
    static var available: Bool {
        ProcessInfo.processInfo.environment["REACHD_GTK_VIEWER"] != nil || FileManager.default.isExecutableFile(atPath: binary)
    }
    static let reason: Comment = "the GTK example is not built: `swift build --package-path Examples/GtkListViewer` (make test builds it)"
}

/// The GTK example in a real window under Xvfb, in the test network's host
/// namespace, its item server in the gateway namespace: what a person sees,
/// read off the screen by OCR. With `REACHD_SCREENSHOTS=DIR` (make
/// screenshots), each state worth a picture is kept there as PNG.
@Suite(
    "The GTK list viewer, read off the screen", .serialized,
    .enabled(if: NamespaceSupport.available, NamespaceSupport.reason),
    .enabled(if: VirtualDisplay.available, VirtualDisplay.reason),
    .enabled(if: GtkViewer.available, GtkViewer.reason))
struct GtkListViewerTests {
    static let items = #"{"status": 200, "items": ["apple", "pear", "plum"]}"#

    /// The app in the host namespace, showing on `display`; on `accessibility`'s
    /// bus, where given, for a screen reader to read.
    static func viewer(
        in network: TestNetwork, on display: VirtualDisplay, refresh: String, environment: [String] = [],
        socket: String? = nil, accessibility: AccessibilityBus? = nil
    ) throws -> Subprocess {
        let desktop = accessibility.map { bus in display.environment.filter { !$0.hasPrefix("NO_AT_BRIDGE=") } + bus.environment }
            ?? display.environment
        let viewer = try Subprocess(
            ["/usr/bin/env", "ip", "netns", "exec", network.host, "/usr/bin/env"] + desktop + environment
                + [GtkViewer.binary, "--url", "http://10.77.0.1:8080/items", "--refresh", refresh]
                + (socket.map { ["--socket", $0] } ?? []))
        display.app = viewer
        return viewer
    }

    /// Keeps what the screen shows as `name`.png, when asked to; `asRead`:
    /// the screen the last reading saw (a state that does not last).
    static func keep(_ display: VirtualDisplay, as name: String, asRead: Bool = false) async throws {
        guard let directory = ProcessInfo.processInfo.environment["REACHD_SCREENSHOTS"] else { return }
        let picture = URL(fileURLWithPath: directory).appendingPathComponent("\(name).png")
        if asRead { return try display.keepLastRead(to: picture) }
        // Kept once two pictures in a row agree: the crossfade (250 ms) is over.
        var last = Data()
        _ = try await eventually("the \(name) screen stops changing", every: .milliseconds(100)) { () -> Bool? in
            try await display.screenshot(to: picture)
            let shot = try Data(contentsOf: picture)
            defer { last = shot }
            return shot == last ? true : nil
        }
    }

    /// The issue's cases in the order a day might bring them.
    @Test func aPersonSeesTheRowsOrThePlaceholderTheEngineChose() async throws {
        let network = try await TestNetwork()
        let (server, serve) = try await ListViewerExampleTests.itemServer(in: network)
        try serve(Self.items)
        let display = try await VirtualDisplay(in: network)
        let viewer = try Self.viewer(in: network, on: display, refresh: "0.5")
        defer { viewer.signal(SIGTERM) }

        // Started with the link down (no address, no route). The first
        // screen waits for GTK's start too, which in make test's first
        // storm once showed nothing readable in 30 s.
        try await display.waitUntil(reads: "No network", "no network with the link down", timeout: .seconds(90))
        try await Self.keep(display, as: "no-network")

        // The link comes back: the rows, with no click.
        try await network.bringUpIPv4(defaultRoute: true)
        try await display.waitUntil(reads: "apple", without: ["No network"], "the rows once the link is back")
        try await Self.keep(display, as: "content")

        // The host loses its default route, but the server is on-link: its
        // rows stay, with no offline wording, past the 2 s grace and refreshes.
        try await network.inHost("route del default")
        // A reading a second: tesseract busies a core, and every suite runs at once.
        var onLink = ""
        #expect(try await holdsThroughout(.seconds(3), every: .seconds(1)) {
            onLink = try await display.text()
            return onLink.contains("apple") && !onLink.contains("offline") && !onLink.contains("No network")
        }, "\(onLink)")

        try serve(#"{"status": 200, "items": []}"#)
        try await display.waitUntil(reads: "Nothing here yet", without: ["apple"], "the no-data page")
        try await Self.keep(display, as: "no-data")

        try serve(#"{"status": 500, "items": []}"#)
        try await display.waitUntil(reads: "Something went wrong", "the failed page")
        try await Self.keep(display, as: "failed")

        // Rows, then the server's link goes: the rows stay, under a banner.
        try serve(Self.items)
        try await display.waitUntil(reads: "apple", "the rows again")
        try await network.inGateway("link set vg down")
        let banner = try await display.waitUntil(reads: "offline", "the offline banner")
        #expect(banner.contains("apple") && banner.contains("Retry"), "the rows under the banner: \(banner)")
        try await Self.keep(display, as: "offline-banner")
        #expect(viewer.isRunning, "\(viewer.errorOutput)")
        _ = server
    }

    /// What a screen reader finds: the placeholder page named by its title
    /// and described by the catalog's accessibility label, its button, and
    /// the header's icon-only button by what it does.
    @Test(.enabled(if: AccessibilityBus.available, AccessibilityBus.reason))
    func aScreenReaderHearsThePlaceholder() async throws {
        let network = try await TestNetwork()
        let display = try await VirtualDisplay(in: network)
        let bus = try await AccessibilityBus(in: network)
        let viewer = try Self.viewer(in: network, on: display, refresh: "3600", accessibility: bus)
        defer { viewer.signal(SIGTERM) }
        let noNetwork = try #require(PlaceholderCatalog().content(for: .noNetwork))

        let objects = try await eventually("the no-network page, read by AT-SPI") { () -> [AccessibilityBus.Object]? in
            guard let objects = try await bus.objects(of: "gtk-list-viewer") else { return nil }
            return objects.contains { $0.name == noNetwork.title } ? objects : nil
        }
        let page = objects.first { $0.name == noNetwork.title }
        #expect(page?.role == "panel" && page?.description == noNetwork.accessibilityLabel, "\(objects)")
        let buttons = objects.filter { $0.role == "push button" }.map(\.name)
        #expect(buttons.contains("Retry") && buttons.contains("Refresh"), "the buttons a screen reader names: \(buttons)")
        #expect(viewer.isRunning, "\(viewer.errorOutput)")
    }

    /// Behind a portal: "Sign in to the network", and its button opens the
    /// portal's page with the desktop's handler for web pages (here a
    /// stand-in that writes down what it was asked to open). Once signed in,
    /// the list loads with no click.
    @Test func behindAPortalTheSignInButtonOpensThePortalsPage() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let portal = try await CheckServer(
            in: network, answering: .init(status: 302, headers: ["Location": "http://10.77.0.1:8081/login"]), port: 8081)
        let (server, serve) = try await ListViewerExampleTests.itemServer(in: network)
        try serve(#"{"status": 200, "body": "<html>Sign in to Hotel Wi-Fi</html>"}"#)
        let daemon = try await network.startDaemon(["--check-url", portal.url])
        let (handler, opened) = try Self.webPageHandler(in: network.directory)
        let display = try await VirtualDisplay(in: network)
        let viewer = try Self.viewer(in: network, on: display, refresh: "3600", environment: handler, socket: network.socketPath)
        defer { viewer.signal(SIGTERM) }

        // The first screen: GTK's start too (see above).
        try await display.waitUntil(reads: "Sign in to the network", "the sign-in page", timeout: .seconds(90))
        try await Self.keep(display, as: "sign-in-required")
        try await display.click("Sign In")
        let page = try? await eventually("the portal's page opened") {
            (try? String(contentsOf: opened, encoding: .utf8)).flatMap { $0.isEmpty ? nil : $0 }
        }
        #expect(page?.trimmingCharacters(in: .whitespacesAndNewlines) == "http://10.77.0.1:8081/login",
                "the app said: \(viewer.errorOutput)")

        // Signed in: the portal lets everything through, and checks again.
        try portal.answering(.init(status: 204))
        try serve(Self.items)
        let check = try await network.reachd("check", "--socket", network.socketPath)
        #expect(check.status == 0, "\(check.output) \(check.error)")
        try await display.waitUntil(reads: "apple", "the rows after signing in, with no click")
        _ = (server, daemon)
    }

    /// A desktop handler for http links that writes each link it is given
    /// to a file: the environment for the app, and the file.
    static func webPageHandler(in directory: URL) throws -> (environment: [String], opened: URL) {
        let data = directory.appendingPathComponent("xdg-data")
        let config = directory.appendingPathComponent("xdg-config")
        let opened = directory.appendingPathComponent("opened")
        let applications = data.appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try """
            [Desktop Entry]
            Type=Application
            Name=Write down the link
            Exec=/bin/sh -c 'echo "$1" >> \(opened.path)' sh %u
            MimeType=x-scheme-handler/http;x-scheme-handler/https;
            """.write(to: applications.appendingPathComponent("write-down.desktop"), atomically: true, encoding: .utf8)
        try """
            [Default Applications]
            x-scheme-handler/http=write-down.desktop
            x-scheme-handler/https=write-down.desktop
            """.write(to: config.appendingPathComponent("mimeapps.list"), atomically: true, encoding: .utf8)
        return (["XDG_DATA_HOME=\(data.path)", "XDG_CONFIG_HOME=\(config.path)"], opened)
    }

    /// A slow first load shows the spinner; a failure, the failed page;
    /// Retry loads again (the refresh is an hour away: only the click
    /// can); and with the rows shown and nothing due, GTK's thread sleeps
    /// (a hidden spinner that still spun wrote 700 times a second to X).
    @Test func loadingFailedAndRetryByClick() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let (server, serve) = try await ListViewerExampleTests.itemServer(in: network)
        // Slow enough for OCR to read the spinner page on a busy machine
        // (a byte a second: the app's 3 s idle timeout does not fire).
        try serve(#"{"status": 500, "items": [], "delay": 8}"#)
        let display = try await VirtualDisplay(in: network)
        let viewer = try Self.viewer(in: network, on: display, refresh: "3600")
        defer { viewer.signal(SIGTERM) }

        try await display.waitUntil(reads: "Loading", "the spinner while the first load is slow")
        try await Self.keep(display, as: "loading", asRead: true)
        try await display.waitUntil(reads: "Something went wrong", "the failed page", timeout: .seconds(30))
        try serve(Self.items)
        try await display.click("Retry")
        try await display.waitUntil(reads: "apple", "the rows, loaded by the click")

        // GTK's thread sleeps in its main loop: no timer, no frame drawn.
        // (libdispatch's own timer thread, which Swift concurrency starts,
        // wakes once a second on Linux whatever the program does.)
        let calls = try await QuietClientTests.systemCalls(of: viewer.pid, everyThread: false)
        #expect(calls.isEmpty, "GTK's thread made system calls with nothing to do: \(calls)")
        _ = server
    }

    /// Connected to a network that does not reach the Internet (the
    /// daemon's check finds nothing answering), with the server not
    /// answering either: "No Internet".
    @Test func aNetworkWithoutTheInternetSaysNoInternet() async throws {
        let network = try await TestNetwork()
        try await network.bringUpIPv4(defaultRoute: true)
        let daemon = try await network.startDaemon(["--check-url", "http://10.77.0.1:9/generate_204", "--check-timeout", "0.5"])
        let display = try await VirtualDisplay(in: network)
        let viewer = try Self.viewer(in: network, on: display, refresh: "3600", socket: network.socketPath)
        defer { viewer.signal(SIGTERM) }
        try await display.waitUntil(reads: "No Internet", "no Internet")
        try await Self.keep(display, as: "no-internet")
        _ = daemon
    }
}
