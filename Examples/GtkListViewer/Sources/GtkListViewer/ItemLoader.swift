import Foundation
import ReachabilityPlaceholders

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads the items, on the main actor (GTK's thread): the rows change in
/// the same step as the engine hears of the load, so no state shows the
/// old rows under a new decision.
@MainActor
final class ItemLoader {
    let url: URL
    let placeholders: PlaceholderController
    /// Where the items go: the window's rows.
    var show: ([String]) -> Void = { _ in }
    private var loads = 0
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

    func load() async {
        loads += 1
        await placeholders.load(loads == 1 ? .initial : .refresh) {
            let (data, response) = try await session.data(from: url)
            if let failure = LoadFailure(httpStatus: (response as? HTTPURLResponse)?.statusCode ?? 0) { throw failure }
            let items = try JSONDecoder().decode([String].self, from: data)
            show(items)
            return .items(items.count)
        }
    }
}
