import Testing
@testable import Reachability
@testable import ReachabilityPlaceholders
import TestSupport

/// Issue 8: each promise the README makes about placeholders, as a regression
/// test named after what broke. Driven on explicit instants (`Screen`); only
/// the controller tests use the real clock.
@Suite("Placeholder promises")
struct PlaceholderPromiseTests {
    // 1. The spinner's delay counts from the load.

    @Test func theSpinnerDelayCountsFromTheLoadNotTheFirstInput() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 2000)
        #expect(screen.engine.shown == nil, "no spinner at once: the load has only just started")
        #expect(screen.engine.nextDeadline == screen.at(2500))
        screen.succeed(.initial, 1, 2100, content: .items(3))
        #expect(screen.appeared == [.content], "a result within 500 ms of the load goes straight to it")
    }

    @Test func noSpinnerShowsWithoutALoad() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.content(.items(0), 10)
        #expect(screen.engine.nextDeadline == nil, "nothing to wake up for")
        screen.advance(5000)
        #expect(screen.engine.shown == nil && screen.log.isEmpty)
    }

    // 2. A driver sleeps while a spinner shows.

    @Test func theNextDeadlineIsNeverInThePastWhileASpinnerShows() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.advance(500)
        #expect(screen.kind == .loading)
        #expect(screen.engine.nextDeadline == screen.at(1000), "the minimum time still holds something back")
        screen.advance(1000)
        #expect(screen.engine.nextDeadline == nil, "then nothing is due until the load ends")
        screen.advance(60_000)
        #expect(screen.kind == .loading && screen.engine.nextDeadline == nil)
    }

    // 3. "No network" does not stick once the network is back.

    @Test func noNetworkRetriesWhenTheNetworkReturnsWithinTheGrace() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.network(.offline, 100)
        screen.fail(.initial, 1, .offline, 200)
        #expect(screen.kind == .noNetwork)
        #expect(screen.network(.online, 1000).contains(.retryRequested(attempt: 1)))
    }

    @Test func aRetryThatFailsDuringAShortDropIsRetriedWhenItEnds() {
        var screen = Screen()
        screen.network(.offline, 0)
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, .offline, 10)
        #expect(screen.network(.online, 100).contains(.retryRequested(attempt: 1)))
        screen.start(.refresh, 2, 110)
        screen.network(.offline, 200)   // a drop shorter than the grace
        screen.fail(.refresh, 2, .offline, 300)
        screen.network(.online, 800)
        #expect(screen.kind == .noNetwork)
        #expect(screen.engine.nextDeadline == screen.at(1800), "the second retry waits 1 s")
        #expect(screen.advance(1800).contains(.retryRequested(attempt: 2)))
    }

    @Test(arguments: [LoadFailure.offline, .unreachable(.timeout)])
    func aFailureAfterTheNetworkWentAndCameBackIsTheNetworksAndRetriedAtOnce(failure: LoadFailure) {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.network(.offline, 100)
        screen.network(.online, 400)
        #expect(screen.fail(.initial, 1, failure, 500).contains(.retryRequested(attempt: 1)))
        #expect(screen.kind == .noNetwork, "the drop explains it, though the network is back")
    }

    @Test func aShortDropWhileNoNetworkIsShownChangesNothingButTheRetry() {
        var screen = Screen()
        screen.network(.offline, 0)
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, .offline, 10)
        screen.log = []
        screen.network(.online, 100)
        screen.start(.refresh, 2, 100)
        screen.network(.offline, 200)
        screen.network(.online, 300)
        #expect(screen.appeared.isEmpty, "still noNetwork, no redraw: \(screen.log)")
    }

    @Test func theRetryBackoffIsCappedAtThirtySecondsThroughEvents() throws {
        var screen = Screen()
        screen.network(.offline, 0)
        screen.start(.initial, 1, 0)
        screen.fail(.initial, 1, .offline, 0)
        var now = 0
        var gaps: [Int] = []
        var lastRetry = 0
        for generation in 2...10 {
            // The network returns; the retry comes when its backoff allows.
            now += 100
            screen.network(.online, now)
            if !screen.log.contains(.retryRequested(attempt: generation - 1)) {
                let due = try #require(screen.engine.nextDeadline, "a retry is due after generation \(generation - 1)")
                now = Int((due - screen.at(0)) / .milliseconds(1))
                screen.advance(now)
            }
            #expect(screen.log.contains(.retryRequested(attempt: generation - 1)))
            gaps.append(now - lastRetry)
            lastRetry = now
            screen.start(.refresh, generation, now)
            screen.fail(.refresh, generation, .offline, now)
            screen.network(.offline, now)
        }
        let waits = gaps.dropFirst().map { $0 - 100 }
        #expect(waits == [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000], "\(waits)")
    }

    // 4. Events are edge-triggered on the kind shown.

    @Test(arguments: [
        (ListContent.items(3), nil),
        (ListContent.items(0), nil),
        (ListContent.items(0), LoadFailure.server(status: 500)),
    ] as [(ListContent, LoadFailure?)])
    func aReloadWithTheSameResultIsTwoUpdatesNotARedraw(content: ListContent, failure: LoadFailure?) throws {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        if let failure { screen.fail(.initial, 1, failure, 10) } else { screen.succeed(.initial, 1, 10, content: content) }
        let shown = try #require(screen.engine.shown)
        screen.log = []
        screen.start(.refresh, 2, 1000)
        if let failure { screen.fail(.refresh, 2, failure, 1100) } else { screen.succeed(.refresh, 2, 1100, content: content) }
        #expect(screen.engine.shown == shown)
        var refreshing = shown
        refreshing.isRefreshing = true
        #expect(screen.log == [.updated(refreshing), .updated(shown)])
    }

    // 5. A failure while the network is down is the network's, at once.

    @Test func aNetworkFailureDuringTheGraceIsNoNetworkAtOnce() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.network(.offline, 100)
        screen.fail(.initial, 1, .unreachable(.timeout), 200)
        #expect(screen.appeared == [.noNetwork], "never failed(unreachable) first")
        screen.advance(2100)
        #expect(screen.appeared == [.noNetwork])
    }

    @Test func aServerFailureDuringADropIsStillTheServers() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.network(.offline, 100)
        screen.fail(.initial, 1, .server(status: 503), 200)
        #expect(screen.kind == .failed(.server(status: 503)))
    }

    // 6. Footers.

    @Test func aPageLoadSupersededByARefreshStopsItsFooter() {
        var screen = Screen.loaded(rows: 5)
        screen.start(.append, 2, 10)
        #expect(screen.engine.shown?.decoration.appendFooter == .loading)
        screen.start(.refresh, 3, 20)
        screen.succeed(.append, 2, 30, content: .items(10))   // stale: from before the refresh
        #expect(screen.engine.shown?.decoration.appendFooter == nil, "no footer spinning for ever")
        screen.succeed(.refresh, 3, 40, content: .items(5))
        #expect(screen.engine.shown == PlaceholderState(kind: .content))
    }

    @Test func aPageLoadSupersededByANewerOneLeavesTheFooterToTheNewer() {
        var screen = Screen.loaded(rows: 5)
        screen.start(.append, 2, 10)
        screen.start(.append, 3, 20)
        screen.fail(.append, 2, .unreachable(.timeout), 30)   // the older one: ignored
        #expect(screen.engine.shown?.decoration.appendFooter == .loading)
        screen.succeed(.append, 3, 40, content: .items(10), end: true)
        #expect(screen.engine.shown?.decoration.appendFooter == .endReached)
    }

    @Test(arguments: [AppendFooter.failed(.unreachable(.timeout)), .endReached])
    func aSuccessfulRefreshDropsTheOldListsFooter(footer: AppendFooter) {
        var screen = Screen.loaded(rows: 5)
        screen.start(.append, 2, 10)
        if case .failed(let failure) = footer { screen.fail(.append, 2, failure, 20) } else { screen.succeed(.append, 2, 20, end: true) }
        #expect(screen.engine.shown?.decoration.appendFooter == footer)
        screen.start(.refresh, 3, 30)
        #expect(screen.engine.shown?.decoration.appendFooter == footer, "the old rows still show, with their footer")
        screen.succeed(.refresh, 3, 40, content: .items(5))
        #expect(screen.engine.shown?.decoration.appendFooter == nil)
    }

    @Test func aCancelledPageLoadKeepsTheFailedFooterItReplaced() {
        var screen = Screen.loaded(rows: 5)
        screen.start(.append, 2, 10)
        screen.fail(.append, 2, .unreachable(.dns), 20)
        screen.start(.append, 3, 30)
        screen.fail(.append, 3, .cancelled, 40)
        #expect(screen.engine.shown?.decoration.appendFooter == .failed(.unreachable(.dns)))
    }

    // 8. reset() forgets every result, rows included.

    @Test func resetForgetsTheRows() {
        var screen = Screen.loaded(rows: 5)
        screen.record(screen.engine.reset(at: screen.at(10)))
        screen.start(.initial, 2, 10)
        #expect(screen.engine.shown?.isRefreshing != true, "not the old rows with a refresh spinner")
        screen.advance(510)
        #expect(screen.kind == .loading)
        screen.succeed(.initial, 2, 600, content: .items(0))
        screen.advance(1010)
        #expect(screen.kind == .noData)
    }

    // More of what the README promises.

    @Test func aRowInALaterSectionIsContent() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        let sections = ListContent(sections: [.init(rows: 0, hasHeader: true), .init(rows: 0), .init(rows: 1)])
        screen.succeed(.initial, 1, 10, content: sections)
        #expect(screen.kind == .content)
    }

    @Test func aCompletionFromBeforeAResetIsIgnored() {
        var screen = Screen.loaded(rows: 5)
        screen.start(.append, 2, 10)
        screen.record(screen.engine.reset(at: screen.at(20)))
        screen.succeed(.append, 2, 30, content: .items(10))
        #expect(screen.engine.shown?.decoration.appendFooter == nil)
        screen.start(.initial, 3, 40)
        screen.succeed(.initial, 3, 50, content: .items(2))
        #expect(screen.engine.shown == PlaceholderState(kind: .content))
    }
}

/// The controller on the real clock.
@Suite("Placeholder controller promises")
struct PlaceholderControllerPromiseTests {
    @Test func theControllerSleepsWhileASpinnerShows() async throws {
        let controller = PlaceholderController()
        controller.networkChanged(.online)
        controller.loadStarted(.initial, generation: 1)
        // The spinner after its delay. Waited for, not timed: make test runs
        // CPU-bound suites beside this one on a two-thread pool.
        _ = try await eventually("the spinner") { controller.shown?.kind == .loading ? true : nil }
        // At most the minimum-display deadline is left; then it sleeps until
        // the load ends (the old engine busy-looped here).
        let before = controller.wakeUps
        #expect(try await holdsThroughout(.seconds(1)) { controller.wakeUps - before <= 1 },
                "\(controller.wakeUps - before) wake-ups in 1 s with a spinner showing")
        #expect(controller.shown?.kind == .loading)
    }

    @Test func followKeepsATemporaryMonitorAliveAndLetsItGoWithTheController() async throws {
        weak var followed: ReachabilityMonitor?
        var controller: PlaceholderController? = PlaceholderController()
        do {
            // A daemon-only monitor where none listens: no netlink sockets in
            // this process, which another suite counts.
            let monitor = ReachabilityMonitor(source: .daemon, socketPath: "/nonexistent/reachd.sock")
            followed = monitor
            controller?.follow(monitor)
        }
        #expect(followed != nil, "follow(ReachabilityMonitor()) must keep the monitor")
        controller = nil
        _ = try? await eventually("the monitor let go", timeout: .seconds(5)) { followed == nil ? true : nil }
        #expect(followed == nil, "and let it go when the controller goes")
    }

    @Test func followTakesAnyAsyncSequenceOfConditions() async throws {
        let controller = PlaceholderController()
        let (conditions, feed) = AsyncStream.makeStream(of: NetworkCondition.self)
        controller.follow(conditions)
        feed.yield(.offline)
        var events = controller.events.makeAsyncIterator()
        #expect(await events.next() == .willAppear(PlaceholderState(kind: .noNetwork)))
        feed.yield(.online)
        controller.loadStarted(.initial, generation: 1)
        controller.loadSucceeded(.initial, generation: 1, content: .items(1))
        #expect(await events.next() == .didAppear(PlaceholderState(kind: .noNetwork)))
        #expect(await events.next() == .willDisappear(PlaceholderState(kind: .noNetwork)))
    }
}

@Suite("Placeholder descriptions")
struct PlaceholderDescriptionTests {
    @Test func userVisibleDescriptionsNameNoTypes() {
        for kind in PlaceholderKind.allCases {
            #expect(!"\(kind)".contains("Reachability") && !"\(kind)".contains("Cause"), "\(kind)")
        }
        #expect("\(PlaceholderKind.failed(.unreachable(.refused)))" == "failed(unreachable(refused))")
        #expect("\(LoadFailure.server(status: 500))" == "server(status: 500)")
    }

    @Test func everyKindIsListedOnce() {
        let kinds = PlaceholderKind.allCases
        #expect(Set(kinds).count == kinds.count)
        #expect(kinds.count == 6 + 9, "six kinds, and failed with each of nine failures")
        #expect(kinds.contains(.failed(.unreachable(.tls))))
        #expect(kinds.filter { PlaceholderCatalog().content(for: $0) == nil } == [.content], "only rows need no placeholder")
    }
}

/// Issue 9, the client side: what the connectivity check found reaches the screen.
@Suite("Placeholders behind a portal or a limited network")
struct PlaceholderConnectivityTests {
    static func status(_ connectivity: Connectivity, reachability: ReachabilityLevel = .online, portalURL: String? = nil) -> NetworkStatus {
        let family = FamilyStatus(
            reachability: reachability, reason: nil,
            path: reachability == .online ? NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1") : nil)
        return .built(ipv4: family, connectivity: connectivity, portalURL: portalURL, changedAt: .now)
    }

    @Test func aStatusBecomesTheConditionTheCheckFound() {
        #expect(NetworkCondition(Self.status(.portal, portalURL: "http://portal/")) == .portal)
        #expect(NetworkCondition(Self.status(.limited)) == .limited)
        #expect(NetworkCondition(Self.status(.full)) == .online)
        #expect(NetworkCondition(Self.status(.unknown)) == .online, "no check: the routes decide")
        #expect(NetworkCondition(Self.status(.none, reachability: .local)) == .offline)
    }

    @Test func behindAPortalTheScreenSaysSignInAndWhere() {
        var screen = Screen()
        screen.record(screen.engine.networkChanged(.portal, portalURL: "http://portal.example/login", at: screen.at(0)))
        #expect(screen.engine.shown == PlaceholderState(kind: .signInRequired, portalURL: "http://portal.example/login"))
        let content = PlaceholderCatalog().content(for: screen.engine.shown!)
        #expect(content?.action == .openSignIn && content?.actionURL == "http://portal.example/login")
    }

    @Test func aFailureBehindAPortalIsSignInWithItsURL() {
        var screen = Screen()
        screen.network(.online, 0)
        screen.start(.initial, 1, 0)
        screen.record(screen.engine.networkChanged(.portal, portalURL: "http://portal/", at: screen.at(100)))
        screen.fail(.initial, 1, .unreachable(.dns), 200)
        #expect(screen.engine.shown == PlaceholderState(kind: .signInRequired, portalURL: "http://portal/"))
    }

    @Test(arguments: [LoadFailure.decoding, .server(status: 500), .client(status: 403)])
    func anyFailureBehindAPortalIsThePortals(failure: LoadFailure) {
        var screen = Screen()
        screen.record(screen.engine.networkChanged(.portal, portalURL: "http://portal/", at: screen.at(0)))
        screen.start(.initial, 1, 10)
        screen.fail(.initial, 1, failure, 20)
        #expect(screen.kind == .signInRequired, "its sign-in page, not the server's failure")
        var online = Screen()
        online.network(.online, 0)
        online.start(.initial, 1, 10)
        online.fail(.initial, 1, failure, 20)
        #expect(online.kind == .failed(failure))
    }

    @Test func aLimitedNetworkIsNoInternetAndItsRecoveryIsRetried() {
        var screen = Screen()
        screen.network(.limited, 0)
        #expect(screen.kind == .noInternet, "never loaded: the network explains why")
        screen.start(.initial, 1, 10)
        screen.fail(.initial, 1, .unreachable(.timeout), 20)
        #expect(screen.kind == .noInternet)
        #expect(screen.network(.online, 500).contains(.retryRequested(attempt: 1)))
        let content = PlaceholderCatalog().content(for: .noInternet)
        #expect(content?.title == "No Internet" && content?.action == .retry)
    }

    @Test func rowsStayWithABannerWhateverTheNetworkLacks() {
        for condition in [NetworkCondition.offline, .portal, .limited] {
            var screen = Screen.loaded(rows: 3)
            screen.network(condition, 10)
            screen.advance(2010)
            #expect(screen.kind == .content && screen.engine.shown?.decoration.offlineBanner == true, "\(condition)")
        }
    }
}
