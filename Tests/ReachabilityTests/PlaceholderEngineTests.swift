import Synchronization
import Foundation
import Testing
import TestSupport
@testable import Reachability
@testable import ReachabilityPlaceholders

/// A list screen driven through the engine at explicit instants: `at(ms)` is
/// milliseconds after the test's start. Nothing sleeps.
struct Screen {
    var engine: PlaceholderEngine
    let start = ContinuousClock.now
    var log: [PlaceholderEvent] = []

    init(_ configuration: PlaceholderConfiguration = PlaceholderConfiguration()) {
        engine = PlaceholderEngine(configuration: configuration)
    }

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    var kind: PlaceholderKind? { engine.shown?.kind }

    @discardableResult
    mutating func record(_ events: [PlaceholderEvent]) -> [PlaceholderEvent] {
        log += events
        return events
    }

    @discardableResult mutating func network(_ c: NetworkCondition, _ ms: Int) -> [PlaceholderEvent] { record(engine.networkChanged(c, at: at(ms))) }
    @discardableResult mutating func content(_ c: ListContent, _ ms: Int) -> [PlaceholderEvent] { record(engine.contentChanged(c, at: at(ms))) }
    @discardableResult mutating func start(_ k: LoadKind = .initial, _ g: Int, _ ms: Int) -> [PlaceholderEvent] { record(engine.loadStarted(k, generation: g, at: at(ms))) }
    @discardableResult mutating func succeed(
        _ k: LoadKind = .initial, _ g: Int, _ ms: Int, content: ListContent? = nil, fromCache: Bool = false, end: Bool = false
    ) -> [PlaceholderEvent] {
        record(engine.loadSucceeded(k, generation: g, content: content, fromCache: fromCache, reachedEnd: end, at: at(ms)))
    }
    @discardableResult mutating func fail(_ k: LoadKind = .initial, _ g: Int, _ f: LoadFailure, _ ms: Int) -> [PlaceholderEvent] { record(engine.loadFailed(k, generation: g, f, at: at(ms))) }
    @discardableResult mutating func pathChanged(_ ms: Int) -> [PlaceholderEvent] { record(engine.pathChanged(at: at(ms))) }
    @discardableResult mutating func advance(_ ms: Int) -> [PlaceholderEvent] { record(engine.advance(to: at(ms))) }

    /// A list that loaded `rows` items at 0 ms, shown at once.
    static func loaded(rows: Int, _ configuration: PlaceholderConfiguration = PlaceholderConfiguration()) -> Screen {
        var screen = Screen(configuration)
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.content(.items(rows), 0)
        screen.succeed(.initial, 1, 0)
        screen.log = []
        return screen
    }

    var appeared: [PlaceholderKind] {
        log.compactMap { if case .didAppear(let state) = $0 { state.kind } else { nil } }
    }
}

@Suite("Placeholder rules, first match wins")
struct PlaceholderRuleTests {
    @Test func aForcedKindWinsAndSuppressionShowsTheList() {
        var screen = Screen.loaded(rows: 0)
        #expect(screen.kind == .noData)
        screen.record(screen.engine.force(.signInRequired, at: screen.at(10)))
        #expect(screen.kind == .signInRequired)
        screen.record(screen.engine.force(nil, at: screen.at(20)))
        screen.record(screen.engine.suppressPlaceholders(true, at: screen.at(30)))
        #expect(screen.kind == .content)
    }

    @Test func contentBeatsEverythingWithDecorations() {
        var screen = Screen.loaded(rows: 3)
        screen.start(.refresh, 2, 10)
        screen.fail(.refresh, 2, .server(status: 503), 20)
        screen.start(.append, 3, 30)
        #expect(screen.engine.shown == PlaceholderState(
            kind: .content, decoration: ContentDecoration(refreshFailed: .server(status: 503), appendFooter: .loading)))
        screen.fail(.append, 3, .unreachable(.timeout), 40)
        #expect(screen.kind == .content, "an append failure never replaces content")
        #expect(screen.engine.shown?.decoration.appendFooter == .failed(.unreachable(.timeout)))
        screen.start(.append, 4, 50)
        screen.succeed(.append, 4, 60, end: true)
        #expect(screen.engine.shown?.decoration.appendFooter == .endReached)
    }

    @Test func theFirstLoadInFlightIsLoadingNeverEmpty() {
        var screen = Screen()
        screen.start(.initial, 1, 0)
        screen.advance(500)
        #expect(screen.kind == .loading)
    }

    @Test func aRefreshAfterAResultKeepsShowingThatResult() {
        var screen = Screen.loaded(rows: 0)
        screen.start(.refresh, 2, 10)
        screen.advance(2000)
        #expect(screen.engine.shown == PlaceholderState(kind: .noData, isRefreshing: true), "no blink back to loading")
        #expect(!screen.appeared.contains(.loading))
    }

    @Test func neverLoadedAndIdleShowsNothingOnlineAndNoNetworkOffline() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.advance(500)
        #expect(screen.engine.shown == nil, "no spinner without a load, no \"no data\" without a result")
        var offline = Screen()
        offline.network(.offline, 0)
        #expect(offline.kind == .noNetwork)
    }

    @Test(arguments: [LoadFailure.offline, .unreachable(.dns)])
    func networkFailuresAreNoNetworkOrSignIn(failure: LoadFailure) {
        var offline = Screen()
        offline.network(.offline, 0)
        offline.start(.initial, 1, 0)
        offline.fail(.initial, 1, failure, 10)
        #expect(offline.kind == .noNetwork)

        var portal = Screen()
        portal.network(.portal, 0)
        portal.start(.initial, 1, 0)
        portal.fail(.initial, 1, failure, 10)
        #expect(portal.kind == .signInRequired)
    }

    @Test func anOfflineFailureIsNoNetworkEvenWhileTheNetworkLooksOnline() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, .offline, 10)
        #expect(screen.kind == .noNetwork)
    }

    @Test(arguments: [LoadFailure.server(status: 500), .client(status: 404), .decoding, .unreachable(.refused), .unreachable(.tls)])
    func otherFailuresWhileOnlineAreFailed(failure: LoadFailure) {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, failure, 10)
        #expect(screen.kind == .failed(failure))
    }

    @Test func aCancelledLoadKeepsThePreviousState() {
        var screen = Screen.loaded(rows: 0)
        screen.start(.refresh, 2, 10)
        screen.fail(.refresh, 2, .cancelled, 20)
        #expect(screen.engine.shown == PlaceholderState(kind: .noData))
    }

    @Test func anEmptyResultIsNoDataUnlessItCameFromACacheWhileOffline() {
        var fromServer = Screen()
        fromServer.start(.initial, 1, 0)
        fromServer.succeed(.initial, 1, 10)
        #expect(fromServer.kind == .noData)

        var fromCache = Screen()
        fromCache.network(.offline, 0)
        fromCache.start(.initial, 1, 0)
        fromCache.succeed(.initial, 1, 10, fromCache: true)
        #expect(fromCache.kind == .noNetwork)
    }

    @Test func headerOnlySectionsFollowThePolicy() {
        let headerOnly = ListContent(sections: [.init(rows: 0, hasHeader: true), .init(rows: 0, hasFooter: true)])
        var screen = Screen()
        screen.start(.initial, 1, 0)
        screen.content(headerOnly, 0)
        screen.succeed(.initial, 1, 10)
        #expect(screen.kind == .noData)

        var counting = Screen(PlaceholderConfiguration(headerOnlySections: .content))
        counting.start(.initial, 1, 0)
        counting.content(headerOnly, 0)
        counting.succeed(.initial, 1, 10)
        #expect(counting.kind == .content)
    }

    @Test func resetForgetsResultsAndIgnoresLoadsStartedBeforeIt() {
        var screen = Screen.loaded(rows: 0)
        screen.start(.refresh, 2, 10)
        screen.record(screen.engine.reset(at: screen.at(20)))
        #expect(screen.engine.shown == nil, "the forgotten result is not shown")
        screen.fail(.refresh, 2, .server(status: 500), 30)
        #expect(screen.engine.shown == nil, "a load from before the reset decides nothing")
        screen.start(.initial, 3, 40)
        screen.advance(1000)
        #expect(screen.kind == .loading, "after a reset nothing is loaded")
    }
}

@Suite("Placeholder timing, on a test clock")
struct PlaceholderTimingTests {
    @Test func loadingWaitsHalfASecondBeforeItShows() {
        var screen = Screen()
        screen.start(.initial, 1, 0)
        #expect(screen.engine.shown == nil)
        #expect(screen.engine.nextDeadline == screen.at(500))
        screen.advance(499)
        #expect(screen.engine.shown == nil)
        screen.advance(500)
        #expect(screen.kind == .loading)
    }

    @Test func aResultBeforeTheDelayGoesStraightToIt() {
        var screen = Screen()
        screen.start(.initial, 1, 0)
        screen.succeed(.initial, 1, 300, content: .items(2))
        screen.advance(1000)
        #expect(screen.appeared == [.content])
    }

    @Test func loadingStaysAtLeastHalfASecondOnceShown() {
        var screen = Screen()
        screen.start(.initial, 1, 0)
        screen.advance(500)
        screen.content(.items(2), 600)
        screen.succeed(.initial, 1, 600)
        #expect(screen.kind == .loading)
        #expect(screen.engine.nextDeadline == screen.at(1000))
        screen.advance(999)
        #expect(screen.kind == .loading)
        screen.advance(1000)
        #expect(screen.kind == .content)
        #expect(screen.appeared == [.loading, .content])
    }

    @Test func goingOfflineMustLastTwoSecondsBeforeItRelabels() {
        var screen = Screen.loaded(rows: 3)
        screen.network(.offline, 1000)
        #expect(screen.engine.shown?.decoration.offlineBanner == false)
        screen.advance(2999)
        #expect(screen.engine.shown?.decoration.offlineBanner == false)
        screen.advance(3000)
        #expect(screen.engine.shown?.decoration.offlineBanner == true)
    }

    @Test func aShortDropChangesNothing() {
        var screen = Screen.loaded(rows: 3)
        screen.network(.offline, 1000)
        screen.network(.online, 1500)
        screen.advance(5000)
        #expect(screen.log.isEmpty)
    }

    @Test func comingBackOnlineAppliesAtOnce() {
        var screen = Screen.loaded(rows: 3)
        screen.network(.offline, 0)
        screen.advance(2000)
        #expect(screen.engine.shown?.decoration.offlineBanner == true)
        screen.network(.online, 2001)
        #expect(screen.engine.shown?.decoration.offlineBanner == false)
    }

    @Test func theTimingsAreConfigurable() {
        var screen = Screen(PlaceholderConfiguration(loadingDelay: .milliseconds(100)))
        screen.start(.initial, 1, 0)
        screen.advance(100)
        #expect(screen.kind == .loading)
    }
}

@Suite("Placeholder events and retries")
struct PlaceholderEventTests {
    @Test func transitionsFireWillAndDidInOrder() {
        var screen = Screen.loaded(rows: 0)
        let events = screen.content(.items(1), 10)
        let empty = PlaceholderState(kind: .noData)
        let rows = PlaceholderState(kind: .content)
        #expect(events == [.willDisappear(empty), .willAppear(rows), .didDisappear(empty), .didAppear(rows)])
    }

    @Test func equalInputsAreANoOp() {
        var screen = Screen.loaded(rows: 2)
        #expect(screen.content(.items(2), 10).isEmpty)
        #expect(screen.network(.online, 20).isEmpty)
        #expect(screen.content(.items(5), 30).isEmpty, "still content, same decoration")
    }

    @Test func aDecorationChangeIsAnUpdateNotARedraw() {
        var screen = Screen.loaded(rows: 2)
        screen.start(.append, 2, 10)
        #expect(screen.log == [.updated(PlaceholderState(kind: .content, decoration: ContentDecoration(appendFooter: .loading)))])
    }

    @Test func theNetworkReturningAsksForOneRetryPerTransitionWithBackoff() {
        var screen = Screen()
        screen.network(.offline, 0)
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, .offline, 10)
        #expect(screen.kind == .noNetwork)

        #expect(screen.network(.online, 100).contains(.retryRequested(attempt: 1)), "the first retry is immediate")
        #expect(screen.network(.online, 150).isEmpty, "once per transition")

        // Still failing: the next return waits 1 s, then 2 s.
        screen.start(.refresh, 2, 200)
        screen.fail(.refresh, 2, .offline, 210)
        screen.network(.offline, 300)
        screen.advance(2300)
        screen.network(.online, 3000)
        #expect(!screen.log.contains(.retryRequested(attempt: 2)))
        #expect(screen.engine.nextDeadline == screen.at(4000))
        #expect(screen.advance(4000).contains(.retryRequested(attempt: 2)))

        screen.start(.refresh, 3, 4100)
        screen.fail(.refresh, 3, .unreachable(.timeout), 4200)
        screen.network(.offline, 4300)
        screen.advance(6300)
        screen.network(.online, 7000)
        #expect(screen.engine.nextDeadline == screen.at(9000))
        #expect(screen.advance(9000).contains(.retryRequested(attempt: 3)))

        // A success resets the backoff.
        screen.start(.refresh, 4, 9100)
        screen.succeed(.refresh, 4, 9200)
        screen.network(.offline, 9300)
        screen.advance(11300)
        #expect(screen.kind == .noData)
        screen.fail(.refresh, 4, .offline, 11400) // stale generation: ignored
        screen.start(.refresh, 5, 11500)
        screen.fail(.refresh, 5, .offline, 11600)
        #expect(screen.network(.online, 12000).contains(.retryRequested(attempt: 1)))
    }

    @Test func theBackoffIsCapped() {
        let configuration = PlaceholderConfiguration(retryInitialBackoff: .seconds(1), retryMaximumBackoff: .seconds(5))
        #expect((0...6).map { configuration.retryDelay(afterAttempts: $0) }
                == [.zero, .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5), .seconds(5)])
    }

    @Test func aServerFailureIsNotRetriedWhenTheNetworkReturns() {
        var screen = Screen()
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, .server(status: 500), 10)
        screen.network(.offline, 20)
        screen.advance(3000)
        #expect(!screen.network(.online, 3100).contains { if case .retryRequested = $0 { true } else { false } })
    }

    /// Online throughout: a load that timed out on the old uplink is tried
    /// again on the new one, once per handover; a server's own failure, a
    /// list that loaded, and a handover while offline ask for nothing.
    @Test func aHandoverRetriesANetworkFailureOnce() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, .unreachable(.timeout), 10)
        #expect(screen.kind == .failed(.unreachable(.timeout)))
        #expect(screen.pathChanged(100).contains(.retryRequested(attempt: 1)), "at once, as on a return")
        screen.start(.refresh, 2, 110)
        screen.fail(.refresh, 2, .unreachable(.timeout), 120)
        #expect(!screen.advance(500).contains { if case .retryRequested = $0 { true } else { false } }, "no retry without a change")
        screen.pathChanged(600)
        #expect(screen.advance(1600).contains(.retryRequested(attempt: 2)), "the second waits out the backoff")

        var server = Screen()
        server.network(.online, 0)
        server.start(.initial, 1, 0)
        server.fail(.initial, 1, .server(status: 500), 10)
        #expect(server.pathChanged(100).isEmpty && server.engine.nextDeadline == nil)

        var loaded = Screen.loaded(rows: 3)
        #expect(loaded.pathChanged(5000).isEmpty)

        var offline = Screen()
        offline.network(.offline, 0)
        offline.start(.initial, 1, 0)
        offline.fail(.initial, 1, .offline, 10)
        #expect(offline.pathChanged(100).isEmpty, "the return asks, not the path")
    }

    @Test func signingInThroughAPortalAsksForARetry() {
        var screen = Screen()
        screen.network(.portal, 0)
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, .unreachable(.tls), 10)
        #expect(screen.kind == .signInRequired)
        #expect(screen.network(.online, 100).contains(.retryRequested(attempt: 1)))
    }
}

/// The classic bugs of list placeholder libraries, each pinned.
@Suite("Placeholder regressions")
struct PlaceholderRegressionTests {
    @Test func theEmptyViewDoesNotFlashBeforeTheFirstLoad() {
        var screen = Screen()
        screen.content(.empty, 0)
        screen.start(.initial, 1, 5)
        screen.succeed(.initial, 1, 200, content: .items(4))
        #expect(screen.appeared == [.content])
    }

    @Test func headerOnlySectionsAreShownAsEmpty() {
        var screen = Screen()
        screen.start(.initial, 1, 0)
        screen.content(ListContent(sections: [.init(rows: 0, hasHeader: true)]), 10)
        screen.succeed(.initial, 1, 10)
        #expect(screen.kind == .noData)
    }

    @Test func goingOfflineNeverHidesLoadedRows() {
        var screen = Screen.loaded(rows: 7)
        screen.network(.offline, 0)
        screen.advance(10_000)
        screen.start(.refresh, 2, 10_100)
        screen.fail(.refresh, 2, .offline, 10_200)
        #expect(screen.kind == .content)
        #expect(screen.engine.shown?.decoration == ContentDecoration(offlineBanner: true, refreshFailed: .offline))
    }

    @Test func aFailedRequestWhileOfflineIsNotAServerError() {
        var screen = Screen()
        screen.network(.offline, 0)
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, .unreachable(.timeout), 10)
        #expect(screen.kind == .noNetwork)
    }

    @Test func aStaleCompletionDoesNotOverrideANewerRefresh() {
        var screen = Screen()
        screen.start(.initial, 1, 0)
        screen.start(.refresh, 2, 10)
        screen.fail(.initial, 1, .server(status: 500), 20)
        #expect(screen.engine.shown == nil, "generation 1 is older than the refresh under way")
        screen.content(.items(3), 30)
        screen.succeed(.refresh, 2, 30)
        #expect(screen.kind == .content)
    }

    @Test func somethingHappensWhenTheNetworkReturns() {
        var screen = Screen()
        screen.network(.offline, 0)
        #expect(screen.kind == .noNetwork)
        #expect(screen.network(.online, 100).contains(.retryRequested(attempt: 1)))
    }
}

@Suite("Placeholder content")
struct PlaceholderCatalogTests {
    @Test func everyPlaceholderHasPlainEnglishContent() throws {
        let catalog = PlaceholderCatalog()
        #expect(catalog.content(for: .content) == nil)
        let noNetwork = try #require(catalog.content(for: .noNetwork))
        #expect(noNetwork.title == "No network")
        #expect(noNetwork.action == .retry)
        #expect(noNetwork.accessibilityLabel.contains("No network"))
        #expect(catalog.content(for: .signInRequired)?.action == .openSignIn)
        #expect(catalog.content(for: .noData)?.action == PlaceholderAction.none)
        for kind in [PlaceholderKind.loading, .noData, .failed(.decoding), .failed(.client(status: 403))] {
            #expect(catalog.content(for: kind)?.title.isEmpty == false)
        }
    }

    /// A load that failed on the name alone (the host online: offline
    /// shows no network) says so, and points at DNS, not the server.
    @Test func aFailedNameLookupHasWordsOfItsOwn() throws {
        let catalog = PlaceholderCatalog()
        let lookup = try #require(catalog.content(for: .failed(.unreachable(.dns))))
        #expect(lookup.title == "Can't look up addresses")
        #expect(lookup.message.contains("DNS") && lookup.action == .retry)
        #expect(PlaceholderCatalog.key(for: .failed(.unreachable(.dns))) == .failedNameLookup)
        for cause in LoadFailure.Cause.allCases where cause != .dns {
            #expect(catalog.content(for: .failed(.unreachable(cause)))?.title == "Can't reach the server", "\(cause)")
        }
    }

    @Test func overridesAndLocalisationApply() {
        var catalog = PlaceholderCatalog()
        catalog.overrides[.noData] = PlaceholderContent(
            title: "No messages", message: "", iconName: "mail-unread-symbolic", action: .none,
            accessibilityLabel: "No messages")
        catalog.iconNames[.noNetwork] = "network-wireless-offline-symbolic"
        catalog.localize = { key, english in key == "noNetwork.title" ? "Pas de réseau" : english }
        #expect(catalog.content(for: .noData)?.title == "No messages")
        #expect(catalog.content(for: .noData)?.iconName == "mail-unread-symbolic")
        #expect(catalog.content(for: .noNetwork)?.title == "Pas de réseau")
        #expect(catalog.content(for: .noNetwork)?.iconName == "network-wireless-offline-symbolic", "the icon, not the words")
        #expect(catalog.content(for: .noInternet)?.iconName == "network-no-route-symbolic", "other icons stay")
        #expect(PlaceholderCatalog.key(for: .failed(.server(status: 502))) == .failedServer)
    }
}

enum AdwaitaTheme {
    static let path: String? = ["/usr/share/icons/Adwaita"].first { FileManager.default.fileExists(atPath: $0 + "/index.theme") }
}

/// The default icons are names a Linux desktop has: each one is a symbolic
/// icon of the Adwaita theme, which every GTK app can load.
@Suite("Placeholder icons", .enabled(if: AdwaitaTheme.path != nil, "needs adwaita-icon-theme (make test installs it)"))
struct PlaceholderIconTests {

    @Test(arguments: PlaceholderKind.allCases.filter { $0 != .content })
    func everyDefaultIconIsInTheAdwaitaTheme(kind: PlaceholderKind) throws {
        let icon = try #require(PlaceholderCatalog().content(for: kind)?.iconName)
        #expect(icon.hasSuffix("-symbolic"), "\(kind): \(icon) is not a symbolic icon")
        let found = FileManager.default.enumerator(atPath: AdwaitaTheme.path!)?.contains { ($0 as? String)?.hasSuffix("/\(icon).svg") == true }
        #expect(found == true, "\(kind): \(icon) is not in \(AdwaitaTheme.path!)")
    }
}

@Suite("Banners over rows")
struct PlaceholderBannerTests {
    @Test func offlineComesFirstAndBothOfferARetry() {
        let catalog = PlaceholderCatalog()
        let offline = catalog.banner(for: PlaceholderState(
            kind: .content, decoration: ContentDecoration(offlineBanner: true, refreshFailed: .unreachable(.timeout))))
        #expect(offline == PlaceholderBanner(message: "You're offline. This is the list as it last loaded.", action: .retry))
        let failed = catalog.banner(for: PlaceholderState(
            kind: .content, decoration: ContentDecoration(refreshFailed: .server(status: 503))))
        #expect(failed == PlaceholderBanner(message: "Couldn't refresh. The server had a problem. Try again later.", action: .retry))
    }

    @Test func noBannerOverPlainRowsNorOnAPlaceholder() {
        let catalog = PlaceholderCatalog()
        #expect(catalog.banner(for: PlaceholderState(kind: .content)) == nil)
        #expect(catalog.banner(for: PlaceholderState(kind: .noNetwork, decoration: ContentDecoration(offlineBanner: true))) == nil)
    }

    @Test func buttonsAreWordedAndLocalised() {
        var catalog = PlaceholderCatalog()
        #expect(catalog.title(for: .retry) == "Retry")
        #expect(catalog.title(for: .openSignIn) == "Sign In")
        #expect(catalog.title(for: .none) == nil)
        catalog.localize = { key, english in key == "action.retry" ? "Réessayer" : english }
        #expect(catalog.title(for: .retry) == "Réessayer")
    }

    @Test func bannersAreLocalised() {
        var catalog = PlaceholderCatalog()
        catalog.localize = { key, english in key == "offlineBanner.message" ? "Hors ligne." : english }
        #expect(catalog.banner(for: PlaceholderState(kind: .content, decoration: ContentDecoration(offlineBanner: true)))?.message == "Hors ligne.")
    }
}

@Suite("What a load's failure means")
struct LoadFailureClassificationTests {
    @Test func httpStatuses() {
        #expect(LoadFailure(httpStatus: 200) == nil)
        #expect(LoadFailure(httpStatus: 304) == nil)
        #expect(LoadFailure(httpStatus: 404) == .client(status: 404))
        #expect(LoadFailure(httpStatus: 503) == .server(status: 503))
        #expect(LoadFailure(httpStatus: 0) == .server(status: 0), "no status at all is the server's")
    }

    @Test func errors() {
        #expect(LoadFailure(URLError(.notConnectedToInternet)) == .offline)
        #expect(LoadFailure(URLError(.timedOut)) == .unreachable(.timeout))
        #expect(LoadFailure(URLError(.cannotFindHost)) == .unreachable(.dns))
        #expect(LoadFailure(URLError(.serverCertificateUntrusted)) == .unreachable(.tls))
        #expect(LoadFailure(URLError(.cannotConnectToHost)) == .unreachable(.refused))
        #expect(LoadFailure(URLError(.cancelled)) == .cancelled)
        #expect(LoadFailure(CancellationError()) == .cancelled)
        #expect(LoadFailure(LoadFailure.client(status: 410)) == .client(status: 410))
        do {
            _ = try JSONDecoder().decode([String].self, from: Data("<html>".utf8))
            Issue.record("a page of HTML decoded as a list")
        } catch {
            #expect(LoadFailure(error) == .decoding)
        }
    }
}

@Suite("PlaceholderController.load")
struct PlaceholderControllerLoadTests {
    static let immediate = PlaceholderConfiguration(loadingDelay: .zero, loadingMinimum: .zero)

    @Test func aLoadReportsItsContentOrItsFailure() async {
        let controller = PlaceholderController(configuration: Self.immediate)
        await controller.load(.initial) { .items(2) }
        #expect(controller.shown?.kind == .content)
        await controller.load(.refresh) { .items(0) }
        #expect(controller.shown?.kind == .noData)
        await controller.load(.refresh) { throw LoadFailure.server(status: 500) }
        #expect(controller.shown?.kind == .failed(.server(status: 500)))
    }

    @Test func aLoadThatANewerOneOvertookChangesNothing() async {
        let controller = PlaceholderController(configuration: Self.immediate)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let (started, startedSignal) = AsyncStream.makeStream(of: Void.self)
        async let slow: Void = controller.load(.initial) {
            startedSignal.yield()
            for await _ in released { break }
            return .items(0)
        }
        for await _ in started { break }
        await controller.load(.refresh) { .items(3) }
        release.yield()
        await slow
        #expect(controller.shown?.kind == .content, "the older, empty answer came last but is stale")
    }

    @Test func itsGenerationsFollowExplicitOnes() async {
        let controller = PlaceholderController(configuration: Self.immediate)
        controller.loadStarted(.initial, generation: 41)
        await controller.load(.refresh) { .items(1) }
        controller.loadSucceeded(.initial, generation: 41, content: .items(0))
        #expect(controller.shown?.kind == .content, "load took a generation after 41, so 41's answer is stale")
    }
}

@Suite("PlaceholderController on the real clock")
struct PlaceholderControllerTests {
    static func status(_ path: NetworkPath?, changes: [StatusChange]) -> NetworkStatus {
        .built(ipv4: .through(path, else: .local), changedAt: Date(), changes: changes)
    }

    /// Following a monitor's statuses: the network's return asks for one
    /// retry (its path coming is no handover), a handover one more.
    @Test func aReturnAsksForOneRetryAndAHandoverForOneMore() async throws {
        let controller = PlaceholderController(configuration: PlaceholderConfiguration(
            loadingDelay: .zero, loadingMinimum: .zero, retryInitialBackoff: .milliseconds(200)))
        let retries = Mutex(0)
        let counting = Task {
            for await event in controller.events {
                if case .retryRequested = event { retries.withLock { $0 += 1 } }
            }
        }
        defer { counting.cancel() }
        let (statuses, feed) = AsyncStream.makeStream(of: NetworkStatus.self)
        controller.follow(statuses)
        feed.yield(Self.status(nil, changes: []))
        _ = try await eventually("the first status taken") { controller.network == .offline ? true : nil }
        controller.loadStarted(.initial, generation: 1)
        controller.loadFailed(.initial, generation: 1, .offline)
        #expect(controller.shown?.kind == .noNetwork)
        let eth0 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "10.0.0.1")
        feed.yield(Self.status(eth0, changes: [.reachability(.ipv4, from: .local, to: .online), .path(.ipv4, from: nil, to: eth0)]))
        _ = try await eventually("the return's retry") { retries.withLock { $0 } >= 1 ? true : nil }
        // Past the 200 ms a second retry would have waited.
        #expect(try await holdsThroughout(.milliseconds(500)) { retries.withLock { $0 } == 1 }, "one retry for the return")
        let tun0 = NetworkPath(interface: "tun0", index: 9, family: .ipv4, gateway: nil)
        controller.loadStarted(.refresh, generation: 2)
        controller.loadFailed(.refresh, generation: 2, .unreachable(.timeout))
        feed.yield(Self.status(tun0, changes: [.path(.ipv4, from: eth0, to: tun0)]))
        _ = try? await eventually("the handover's retry") { retries.withLock { $0 } >= 2 ? true : nil }
        #expect(retries.withLock { $0 } == 2, "one more for the handover")
    }

    @Test func itWakesItselfAtTheEnginesDeadlines() async throws {
        let controller = PlaceholderController(configuration: PlaceholderConfiguration(
            loadingDelay: .milliseconds(20), loadingMinimum: .milliseconds(20)))
        controller.loadStarted(.initial, generation: 1)
        var appeared: [PlaceholderKind] = []
        for await event in controller.events {
            guard case .didAppear(let state) = event else { continue }
            appeared.append(state.kind)
            if state.kind == .loading {
                controller.contentChanged(.items(1))
                controller.loadSucceeded(.initial, generation: 1)
            }
            if state.kind == .content { break }
        }
        #expect(appeared == [.loading, .content])
    }
}
