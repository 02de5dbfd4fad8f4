import ArgumentParser
import CAdwaita
import Foundation
import GtkBridge
import Reachability
import ReachabilityPlaceholders

/// A GTK 4 / libadwaita list viewer: loads a JSON array of strings from a
/// URL and shows the rows, or the placeholder reachd chooses for them, in a
/// real window. The terminal viewer's flags (Examples/ListViewer).
@main
struct GtkListViewer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gtk-list-viewer",
        abstract: "Show a list from an HTTP URL in a window, or the placeholder reachd chooses for it.",
        discussion: """
            Examples:
              gtk-list-viewer --url http://127.0.0.1:8080/items
              gtk-list-viewer --url http://10.0.0.1:8080/items --refresh 2
            """)

    @Option(help: "Where the items are: a JSON array of strings.")
    var url: String

    @Option(help: "Seconds between refreshes.")
    var refresh: Double = 5

    @Option(help: "The reachd daemon's socket (default: the usual paths, else in-process).")
    var socket: String?

    func validate() throws {
        do {
            _ = try Destination(url: url)
        } catch {
            throw ValidationError("--url: \(error)")
        }
        guard refresh > 0, refresh <= 86_400 else {
            throw ValidationError("--refresh must be a number of seconds from 0 to 86400 (a day), not \(refresh)")
        }
    }

    func run() throws {
        let server = try Destination(url: url)
        guard let items = URL(string: url) else { throw ValidationError("--url: Foundation can't load \"\(url)\"") }
        let options = Viewer.Options(items: items, server: server, refresh: .seconds(refresh), socket: socket)
        // ArgumentParser runs commands on the main thread: GTK's.
        let status = MainActor.assumeIsolated { Viewer.run(options) }
        if status != 0 { throw ExitCode(status) }
    }
}

/// The app: a window, the placeholder engine following the server's
/// reachability, and the loads, all on GTK's thread.
@MainActor
final class Viewer {
    struct Options {
        var items: URL
        var server: Destination
        var refresh: Duration
        var socket: String?
    }

    let window: ListWindow
    let monitor: ReachabilityMonitor
    let placeholders = PlaceholderController()
    let loader: ItemLoader
    private var tasks: [Task<Void, Never>] = []

    /// Runs GTK's main loop until the window closes; its exit status.
    static func run(_ options: Options) -> Int32 {
        // Main-actor jobs (every Task below, and every await's resumption)
        // run on GTK's main loop from here on.
        gtk_bridge_serve_main_actor()
        let application = adw_application_new("org.reachd.GtkListViewer", G_APPLICATION_NON_UNIQUE)!
        let gtkApplication = UnsafeMutablePointer<GtkApplication>(OpaquePointer(application))
        var viewer: Viewer?
        connect(application, "activate") {
            if viewer == nil { viewer = Viewer(application: gtkApplication, options) }
            gtk_window_present(viewer?.window.window.as(GtkWindow.self))
        }
        // GTK gets none of our arguments: ArgumentParser has read them.
        var arguments: [UnsafeMutablePointer<CChar>?] = [CommandLine.unsafeArgv[0], nil]
        let status = g_application_run(UnsafeMutablePointer<GApplication>(OpaquePointer(application)), 1, &arguments)
        viewer?.stop()
        g_object_unref(application)
        return status
    }

    private init(application: UnsafeMutablePointer<GtkApplication>, _ options: Options) {
        let catalog = PlaceholderCatalog()
        Self.addStyle(ListWindow.css)
        window = ListWindow(application: application, title: "Items", subtitle: options.server.description, catalog: catalog)
        monitor = ReachabilityMonitor(socketPath: options.socket)
        // "No network" means this app's server is out of reach, not that the
        // host lacks a default route: an intranet list shows on a host that
        // is otherwise offline.
        placeholders.follow(monitor, destination: options.server)
        loader = ItemLoader(url: options.items, placeholders: placeholders)
        let (window, loader, placeholders) = (window, loader, placeholders)
        loader.show = { window.showItems($0) }
        window.reload = { Task { await loader.load() } }
        window.openPage = { page in
            // The desktop's handler for the page (a browser; a portal in a sandbox).
            gtk_show_uri(window.window.as(GtkWindow.self), page, 0)
        }
        // The engine's events arrive on the main actor, GTK's thread: the
        // widgets are touched where GTK wants them, with no polling.
        tasks.append(Task {
            for await event in placeholders.events {
                switch event {
                case .didAppear(let state): window.show(state, newKind: true)
                case .updated(let state): window.show(state, newKind: false)
                case .retryRequested: await loader.load()
                case .willAppear, .willDisappear, .didDisappear: break
                }
            }
        })
        tasks.append(Task {
            while !Task.isCancelled {
                await loader.load()
                try? await Task.sleep(for: options.refresh)
            }
        })
    }

    private func stop() {
        for task in tasks { task.cancel() }
    }

    private static func addStyle(_ css: String) {
        let provider = gtk_css_provider_new()
        gtk_css_provider_load_from_data(provider, css, -1)
        gtk_style_context_add_provider_for_display(
            gdk_display_get_default(), OpaquePointer(provider), UInt32(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
        g_object_unref(provider)
    }
}
