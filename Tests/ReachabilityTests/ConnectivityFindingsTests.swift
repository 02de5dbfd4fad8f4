import Testing
@testable import Reachability

/// A connectivity finding counts only for the path it was made on.
@Suite("Connectivity findings")
struct ConnectivityFindingsTests {
    static let eth0 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1")
    static let wlan0 = NetworkPath(interface: "wlan0", index: 3, family: .ipv4, gateway: "198.51.100.1")
    static let v6 = NetworkPath(interface: "eth0", index: 2, family: .ipv6, gateway: "fe80::1")
    static let offline = FamilyStatus(reachability: .offline, reason: .noRoute, path: nil)

    static func online(_ path: NetworkPath) -> FamilyStatus {
        FamilyStatus(reachability: .online, reason: nil, path: path)
    }

    @Test func aFindingCountsForItsOwnPathOnly() {
        let findings = ConnectivityFindings(ipv4: .init(path: Self.eth0, connectivity: .full))
        #expect(findings.connectivity(ipv4: Self.online(Self.eth0), ipv6: Self.offline) == (.full, nil))
        #expect(findings.connectivity(ipv4: Self.online(Self.wlan0), ipv6: Self.offline) == (.unknown, nil),
                "a new path is unknown until probed, in the same status as the change")
        #expect(findings.connectivity(ipv4: Self.offline, ipv6: Self.offline) == (.none, nil))
    }

    /// The review's find: P, then no path, then P again was published `full`
    /// at once, from the finding made before the path went.
    @Test func aPathThatGoesAndComesBackIsUnknownAgain() {
        var findings = ConnectivityFindings(ipv4: .init(path: Self.eth0, connectivity: .full))
        findings.forget(pathsOtherThan: Self.offline, Self.offline)
        #expect(findings == ConnectivityFindings())
        #expect(findings.connectivity(ipv4: Self.online(Self.eth0), ipv6: Self.offline) == (.unknown, nil))
        var kept = ConnectivityFindings(ipv4: .init(path: Self.eth0, connectivity: .full))
        kept.forget(pathsOtherThan: Self.online(Self.eth0), Self.offline)
        #expect(kept.ipv4 != nil, "an unchanged path keeps its finding")
    }

    @Test func familiesCombineFullThenPortalThenLimited() {
        let portal = ConnectivityFindings.Finding(path: Self.eth0, connectivity: .portal, portalURL: "http://portal.example/")
        let limited = ConnectivityFindings.Finding(path: Self.v6, connectivity: .limited)
        let full = ConnectivityFindings.Finding(path: Self.v6, connectivity: .full)
        let both = (Self.online(Self.eth0), Self.online(Self.v6))
        #expect(ConnectivityFindings(ipv4: portal, ipv6: full).connectivity(ipv4: both.0, ipv6: both.1) == (.full, nil))
        #expect(ConnectivityFindings(ipv4: portal, ipv6: limited).connectivity(ipv4: both.0, ipv6: both.1)
                == (.portal, "http://portal.example/"))
        #expect(ConnectivityFindings(ipv4: .init(path: Self.eth0, connectivity: .limited), ipv6: limited)
            .connectivity(ipv4: both.0, ipv6: both.1) == (.limited, nil))
        #expect(ConnectivityFindings().connectivity(ipv4: both.0, ipv6: both.1) == (.unknown, nil))
    }

    /// A dual-stack host whose IPv6 check says `limited`, in an IPv4
    /// handover: IPv4's new path has no finding yet, and the host is
    /// `unknown` (online), not `limited` by IPv6's verdict. Before, it
    /// was `limited`, and `online` false, until the new path's probe answered.
    @Test func unknownBesideLimitedIsUnknown() {
        let limited = ConnectivityFindings.Finding(path: Self.v6, connectivity: .limited, reason: .noAnswer)
        let findings = ConnectivityFindings(ipv4: .init(path: Self.eth0, connectivity: .full), ipv6: limited)
        #expect(findings.connectivity(ipv4: Self.online(Self.wlan0), ipv6: Self.online(Self.v6)) == (.unknown, nil))
        #expect(findings.reason(ipv4: Self.online(Self.wlan0), ipv6: Self.online(Self.v6)) == nil)
        #expect(findings.connectivity(ipv4: Self.offline, ipv6: Self.online(Self.v6)) == (.limited, nil),
                "the only family online decides alone")
    }

    /// A family whose check host has no address of it was not probed: it
    /// has no say, neither `limited` nor `unknown`, and alone it leaves the
    /// host `unknown`, saying why.
    @Test func aFamilyTheCheckCannotAskHasNoSay() {
        let unasked = ConnectivityFindings.Finding(path: Self.v6, connectivity: .none, reason: .noCheckAddress)
        let both = (Self.online(Self.eth0), Self.online(Self.v6))
        for (verdict, reason) in [(Connectivity.full, ConnectivityReason.expectedAnswer), (.limited, .noAnswer),
                                  (.portal, .portalAnswer)] {
            let findings = ConnectivityFindings(ipv4: .init(path: Self.eth0, connectivity: verdict, reason: reason), ipv6: unasked)
            #expect(findings.connectivity(ipv4: both.0, ipv6: both.1).0 == verdict)
            #expect(findings.reason(ipv4: both.0, ipv6: both.1) == reason)
        }
        let alone = ConnectivityFindings(ipv6: unasked)
        #expect(alone.connectivity(ipv4: Self.offline, ipv6: both.1) == (.unknown, nil))
        #expect(alone.reason(ipv4: Self.offline, ipv6: both.1) == .noCheckAddress)
        #expect(alone.connectivity(ipv4: both.0, ipv6: both.1) == (.unknown, nil), "IPv4's probe is still running")
        #expect(alone.reason(ipv4: both.0, ipv6: both.1) == nil)
    }

    /// The reason is the deciding finding's: a `full` family's over the
    /// other's `limited`, a portal's over `limited`.
    @Test func theReasonIsTheDecidingFindings() {
        let portal = ConnectivityFindings.Finding(path: Self.eth0, connectivity: .portal, reason: .portalAnswer)
        let limited = ConnectivityFindings.Finding(path: Self.v6, connectivity: .limited, reason: .connectionsFail)
        let full = ConnectivityFindings.Finding(path: Self.v6, connectivity: .full, reason: .expectedAnswer)
        let dead = ConnectivityFindings.Finding(path: Self.eth0, connectivity: .limited, reason: .gatewayUnanswered)
        let both = (Self.online(Self.eth0), Self.online(Self.v6))
        #expect(ConnectivityFindings(ipv4: dead, ipv6: full).reason(ipv4: both.0, ipv6: both.1) == .expectedAnswer)
        #expect(ConnectivityFindings(ipv4: portal, ipv6: limited).reason(ipv4: both.0, ipv6: both.1) == .portalAnswer)
        #expect(ConnectivityFindings(ipv4: dead, ipv6: limited).reason(ipv4: both.0, ipv6: both.1) == .gatewayUnanswered)
        #expect(ConnectivityFindings(ipv6: limited).reason(ipv4: both.0, ipv6: Self.offline) == nil, "no finding for a current path")
    }
}

/// The follower's backoff, on a clock the test sets.
@Suite("Retry schedule")
struct RetryScheduleTests {
    @Test func waitsDoubleUpToTheCapAndResetAfterASuccess() {
        let start = ContinuousClock.now
        var schedule = RetrySchedule(.init(initial: .milliseconds(100), maximum: .seconds(1)), first: start)
        let first = schedule.takeIfDue(start)
        #expect(first, "the first attempt is at once")
        #expect(schedule.due == nil)
        var waits: [Duration] = []
        var now = start
        for _ in 0..<6 {
            schedule.failed(now: now)
            let due = schedule.due!
            let early = schedule.takeIfDue(due - .milliseconds(1)), onTime = schedule.takeIfDue(due)
            #expect(!early && onTime)
            waits.append(due - now)
            now = due
        }
        #expect(waits == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
        schedule.succeeded()
        schedule.failed(now: now)
        #expect(schedule.due == now + .milliseconds(100))
        schedule.tryAgain(at: now)
        let again = schedule.takeIfDue(now)
        #expect(again)
    }
}
