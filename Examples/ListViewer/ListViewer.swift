import ArgumentParser
import Foundation
import Reachability
import ReachabilityPlaceholders
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A terminal list viewer: loads a JSON array of strings from a URL and prints
/// either the items or the placeholder the engine chose, live, as the network
/// and the server change. See the README's "Try it" section.
@main
struct ListViewer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list-viewer",
        abstract: "Show a list from an HTTP URL, or the placeholder reachd chooses for it.",
        discussion: """
            Examples:
              list-viewer --url http://127.0.0.1:8080/items
              list-viewer --url http://10.0.0.1:8080/items --refresh 2
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

    func run() async throws {
        let monitor = ReachabilityMonitor(socketPath: socket)
        let placeholders = PlaceholderController()
        // "No network" means this app's server is out of reach, not that the
        // host lacks a default route: an intranet list shows on a host that
        // is otherwise offline.
        placeholders.follow(monitor, destination: try Destination(url: url))
        guard let items = URL(string: url) else { throw ValidationError("--url: Foundation can't load \"\(url)\"") }
        let loader = ItemLoader(url: items, placeholders: placeholders)
        let screen = Screen(catalog: PlaceholderCatalog(), loader: loader)

        let reloads = Task {
            while !Task.isCancelled {
                await loader.load()
                try? await Task.sleep(for: .seconds(refresh))
            }
        }
        defer { reloads.cancel() }
        for await event in placeholders.events {
            switch event {
            case .didAppear(let state), .updated(let state):
                screen.render(state)
            case .retryRequested(let attempt):
                // The network came back while a network failure was shown.
                screen.announce("[retry] the network is back: reloading (attempt \(attempt))")
                Task { await loader.load() }
            case .willAppear, .willDisappear, .didDisappear:
                break
            }
        }
        withExtendedLifetime(monitor) {}
    }
}

/// Fetches the items; the placeholder engine hears of each load through
/// `PlaceholderController.load`.
final class ItemLoader: Sendable {
    let url: URL
    let placeholders: PlaceholderController
    private let state = Mutex<(loads: Int, items: [String])>((0, []))
    private let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 3
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }()

    init(url: URL, placeholders: PlaceholderController) {
        self.url = url
        self.placeholders = placeholders
    }

    var items: [String] { state.withLock { $0.items } }

    /// New items under the same placeholder are printed too: every load
    /// ends with an `updated` event (the refresh is over), and the screen
    /// prints what changed.
    func load() async {
        let first = state.withLock { state in
            state.loads += 1
            return state.loads == 1
        }
        await placeholders.load(first ? .initial : .refresh) {
            let (data, response) = try await session.data(from: url)
            if let failure = LoadFailure(httpStatus: (response as? HTTPURLResponse)?.statusCode ?? 0) { throw failure }
            let items = try JSONDecoder().decode([String].self, from: data)
            state.withLock { $0.items = items }
            return .items(items.count)
        }
    }
}

/// Prints what is shown, one block per change.
final class Screen: Sendable {
    let catalog: PlaceholderCatalog
    let loader: ItemLoader
    private let lastPrinted = Mutex<String?>(nil)

    init(catalog: PlaceholderCatalog, loader: ItemLoader) {
        self.catalog = catalog
        self.loader = loader
    }

    func render(_ state: PlaceholderState?) {
        guard let state else { return }
        let text = describe(state)
        let isNew = lastPrinted.withLock { last in
            defer { last = text }
            return last != text
        }
        if isNew { announce(text) }
    }

    /// Prints a line at once: unbuffered, so a pipe sees each change as it happens.
    func announce(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    private func describe(_ state: PlaceholderState) -> String {
        guard let content = catalog.content(for: state) else {
            let items = loader.items
            let header = "[content] \(items.count) item\(items.count == 1 ? "" : "s")"
                + (catalog.banner(for: state).map { " (\($0.message))" } ?? "")
            return ([header] + items.map { "  - \($0)" }).joined(separator: "\n")
        }
        let tag: String
        switch state.kind {
        case .content: tag = "content"
        case .loading: tag = "loading"
        case .noData: tag = "noData"
        case .noNetwork: tag = "noNetwork"
        case .signInRequired: tag = "signInRequired"
        case .noInternet: tag = "noInternet"
        case .failed(let failure): tag = "failed \(failure)"
        }
        let action = catalog.title(for: content.action).map { button in
            " [" + button + (content.actionURL.map { " at \($0)" } ?? "") + "]"
        } ?? ""
        return "[\(tag)] \(content.title): \(content.message)\(action)"
    }
}
