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
        guard URL(string: url)?.scheme?.hasPrefix("http") == true else {
            throw ValidationError("--url must be an http or https URL, not \"\(url)\"")
        }
        guard refresh > 0 else { throw ValidationError("--refresh must be a positive number of seconds") }
    }

    func run() async throws {
        let monitor = ReachabilityMonitor(socketPath: socket)
        let placeholders = PlaceholderController()
        // "No network" means this app's server is out of reach, not that the
        // host lacks a default route: an intranet list shows on a host that
        // is otherwise offline.
        let items = URL(string: url)!
        if let host = items.host(), let server = try? Destination(host: host, port: items.port ?? (items.scheme == "https" ? 443 : 80)) {
            placeholders.follow(monitor, destination: server)
        } else {
            placeholders.follow(monitor)
        }
        let loader = ItemLoader(url: items, placeholders: placeholders)
        let screen = Screen(catalog: PlaceholderCatalog(), loader: loader)
        // New items under the same placeholder state change what is printed too.
        loader.onItemsChanged = { screen.render(placeholders.shown) }

        let reloads = Task {
            while !Task.isCancelled {
                await loader.load()
                try? await Task.sleep(for: .milliseconds(Int(refresh * 1000)))
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

/// Fetches the items and reports each load's lifecycle to the placeholder engine.
final class ItemLoader: Sendable {
    let url: URL
    let placeholders: PlaceholderController
    private let state = Mutex<(generation: Int, items: [String], onChange: (@Sendable () -> Void)?)>((0, [], nil))
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

    var onItemsChanged: (@Sendable () -> Void)? {
        get { state.withLock { $0.onChange } }
        set { state.withLock { $0.onChange = newValue } }
    }

    func load() async {
        let (generation, first) = state.withLock { state in
            state.generation += 1
            return (state.generation, state.generation == 1)
        }
        let kind: LoadKind = first ? .initial : .refresh
        placeholders.loadStarted(kind, generation: generation)
        do {
            let (data, response) = try await session.data(from: url)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            switch status {
            case 200..<300: break
            case 400..<500: return placeholders.loadFailed(kind, generation: generation, .client(status: status))
            default: return placeholders.loadFailed(kind, generation: generation, .server(status: status))
            }
            guard let items = try? JSONDecoder().decode([String].self, from: data) else {
                return placeholders.loadFailed(kind, generation: generation, .decoding)
            }
            let changed = state.withLock { state in
                defer { state.items = items }
                return state.items != items ? state.onChange : nil
            }
            placeholders.loadSucceeded(kind, generation: generation, content: .items(items.count))
            changed?()
        } catch {
            placeholders.loadFailed(kind, generation: generation, Self.failure(error))
        }
    }

    /// How a URLSession error reads to the placeholder engine.
    static func failure(_ error: any Error) -> LoadFailure {
        guard let error = error as? URLError else { return .unreachable(.refused) }
        switch error.code {
        case .notConnectedToInternet, .networkConnectionLost, .dataNotAllowed: return .offline
        case .timedOut: return .unreachable(.timeout)
        case .cannotFindHost, .dnsLookupFailed: return .unreachable(.dns)
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return .unreachable(.tls)
        case .cancelled: return .cancelled
        default: return .unreachable(.refused)
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
            var banners: [String] = []
            if state.decoration.offlineBanner { banners.append("offline") }
            if let failure = state.decoration.refreshFailed { banners.append("refresh failed: \(failure)") }
            let items = loader.items
            let header = "[content] \(items.count) item\(items.count == 1 ? "" : "s")"
                + (banners.isEmpty ? "" : " (" + banners.joined(separator: "; ") + ")")
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
        let action: String
        switch content.action {
        case .retry: action = " [Retry]"
        case .openSignIn: action = " [Sign in" + (content.actionURL.map { " at \($0)" } ?? "") + "]"
        case .none: action = ""
        }
        return "[\(tag)] \(content.title): \(content.message)\(action)"
    }
}
