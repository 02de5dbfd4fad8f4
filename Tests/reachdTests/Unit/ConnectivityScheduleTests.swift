import Logging
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Reachability
@testable import reachd
import TestSupport

/// When the checker means to probe, on a clock the test sets: no probe is
/// started here, so nothing waits for one.
@Suite("Connectivity check: its schedule")
struct ConnectivityScheduleTests {
    static let eth0 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "192.0.2.1")
    static let wlan0 = NetworkPath(interface: "wlan0", index: 3, family: .ipv4, gateway: "198.51.100.1")

    static func status(ipv4 path: NetworkPath?) -> NetworkStatus {
        .built(ipv4: .through(path, else: .offline))
    }

    /// A 5 s check against a server that is never asked (`probe` stands in).
    static func checker(probe: ConnectivityChecker.Probe? = nil) throws -> ConnectivityChecker {
        let check = try ConnectivityCheck.parse(
            url: "http://192.0.2.80/generate_204", expectation: .status(204), timeout: .seconds(5), interval: .seconds(300))
        guard let probe else { return try ConnectivityChecker(check: check, logger: Logger(label: "test")) }
        return try ConnectivityChecker(check: check, logger: Logger(label: "test"), probe: probe)
    }

    /// Starts what is due at `now` on `checker` and waits for it to answer;
    /// whether what the probes found changed the findings.
    @discardableResult
    static func probe(_ checker: ConnectivityChecker, at now: ContinuousClock.Instant) throws -> Bool {
        checker.startDueProbes(now: now)
        var changed = false
        while checker.isProbing {
            _ = try PollSet.wait(for: checker.wake.fileDescriptor, until: .now + .seconds(5))
            changed = checker.collect(now: now) || changed
        }
        return changed
    }

    @Test func anOfflineHostSchedulesNothing() throws {
        let checker = try Self.checker()
        let now = ContinuousClock.now
        checker.observe(Self.status(ipv4: nil), now: now)
        #expect(checker.nextDeadline == nil, "no timer while no family is online")
        #expect(!checker.isBusy(now: now))
        checker.requestCheck(now: now)
        #expect(checker.nextDeadline == nil, "`reachd check` on an offline host probes nothing")
        #expect(checker.findings == ConnectivityFindings())
    }

    @Test func aNewPathIsDueAtOnceAndAnUnchangedOneIsNotRescheduled() throws {
        let checker = try Self.checker()
        let start = ContinuousClock.now
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        #expect(checker.nextDeadline == start && checker.isBusy(now: start))
        // The same path published again (another interface came and went).
        checker.observe(Self.status(ipv4: Self.eth0), now: start + .seconds(1))
        #expect(checker.nextDeadline == start, "the probe due stays due; it is not pushed back")
        checker.observe(Self.status(ipv4: Self.wlan0), now: start + .seconds(2))
        #expect(checker.nextDeadline == start + .seconds(2), "a changed path is due at once")
        checker.observe(Self.status(ipv4: nil), now: start + .seconds(3))
        #expect(checker.nextDeadline == nil)
    }

    /// `{"op":"check"}` from anyone, on any connection, as often as it
    /// likes: a family is probed once per ``ConnectivityChecker/requestInterval``
    /// at most, and every request by a probe that starts after it. The limit
    /// was per connection, and a user who connected anew for each request
    /// made the daemon send thousands of probes.
    @Test func requestsFromEveryoneProbeAFamilyAtMostOncePerInterval() async throws {
        let probes = Mutex(0)
        let checker = try Self.checker { _, _, _, _, _ in
            probes.withLock { $0 += 1 }
            return ProbeReport(.answered(HTTPResponse(parsing: Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))!))
        }
        let start = ContinuousClock.now
        let interval = ConnectivityChecker.requestInterval
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        try Self.probe(checker, at: start)
        #expect(probes.withLock { $0 } == 1 && !checker.isBusy(now: start), "the new path's own probe")
        for request in 0..<1000 {
            let now = start + .milliseconds(request * 4)
            checker.requestCheck(now: now)
            try Self.probe(checker, at: now)
        }
        #expect(probes.withLock { $0 } == 1, "no probe within the interval of the last, whoever asks")
        #expect(checker.isBusy(now: start + .seconds(4)), "the requests wait for a probe of their own")
        #expect(checker.nextDeadline == start + interval, "due once the interval has passed")
        try Self.probe(checker, at: start + interval)
        #expect(probes.withLock { $0 } == 2 && !checker.isBusy(now: start + interval), "one probe answers them all")
        // Long after, a request probes at once.
        checker.requestCheck(now: start + interval * 3)
        try Self.probe(checker, at: start + interval * 3)
        #expect(probes.withLock { $0 } == 3)
    }

    /// A resolver that hangs, or a server that never answers: the check's
    /// verdict still comes within its timeout, the one confirming probe
    /// included, and the hung probes' late answers change nothing.
    @Test func theTimeoutBoundsTheWholeCheckEvenAHungProbe() async throws {
        let release = try WakeSignal()
        let started = Mutex(0)
        let checker = try Self.checker { _, _, _, _, _ in
            started.withLock { $0 += 1 }
            // As getaddrinfo on a resolver that never answers: no deadline.
            _ = try? PollSet.wait(for: release.fileDescriptor, until: .now + .seconds(30))
            return ProbeReport(.answered(HTTPResponse(parsing: Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))!))
        }
        let start = ContinuousClock.now
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        checker.startDueProbes(now: start)
        let firstDeadline = start + .milliseconds(2250)
        #expect(checker.nextDeadline == firstDeadline, "the first probe has half of what the pause leaves")
        #expect(!checker.expireOverdueProbes(now: firstDeadline - .milliseconds(1)))
        #expect(!checker.expireOverdueProbes(now: firstDeadline), "no answer: confirmed before it is believed")
        #expect(checker.isBusy(now: firstDeadline) && checker.nextDeadline == firstDeadline + .milliseconds(500))
        checker.startDueProbes(now: firstDeadline + .milliseconds(500))
        #expect(checker.nextDeadline == start + .seconds(5), "the confirmation has the rest of the timeout")
        #expect(checker.expireOverdueProbes(now: start + .seconds(5)))
        #expect(checker.findings.ipv4?.connectivity == .limited && !checker.isBusy(now: start + .seconds(5)))
        // The hung probes answer at last: too late to count.
        _ = try await eventually("both probes started", every: .milliseconds(10)) { started.withLock { $0 } >= 2 ? true : nil }
        release.signal()
        _ = try await eventually("both hung probes answered", every: .milliseconds(10)) { checker.finishedProbes == 2 ? true : nil }
        #expect(!checker.collect(now: start + .seconds(6)))
        #expect(checker.findings.ipv4?.connectivity == .limited, "a late answer is stale")
        // Limited already: no confirmation can follow the next probe, which
        // has the whole timeout (half would call a slow server dead for good).
        checker.requestCheck(now: start + .seconds(10))
        checker.startDueProbes(now: start + .seconds(10))
        #expect(checker.nextDeadline == start + .seconds(15), "the whole 5 s")
    }

    /// A name that does not resolve while the server answers at the address
    /// kept from the last answer: confirmed by a second probe, then names
    /// fail and the path works (`full`), retried from 5 s; a probe whose
    /// name resolves again clears it.
    @Test func namesThatFailWhileTheKeptAddressAnswersAreConfirmedThenBelieved() async throws {
        let answered = CheckServerAddress(family: AF_INET, bytes: [2, 0, 0, 80, 192, 0, 2, 80] + Array(repeating: 0, count: 8))
        let namesResolve = Mutex(true)
        let keptSeen = Mutex<[CheckServerAddress?]>([])
        let checker = try Self.checker { _, _, _, kept, _ in
            keptSeen.withLock { $0.append(kept) }
            let response = ProbeOutcome.answered(HTTPResponse(parsing: Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))!)
            if namesResolve.withLock({ $0 }) { return ProbeReport(response, answeredAt: answered) }
            guard let kept else { return ProbeReport(.failed(.dns)) }
            return ProbeReport(response, nameFailed: true, answeredAt: kept)
        }
        let start = ContinuousClock.now
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        #expect(try Self.probe(checker, at: start))
        #expect(checker.findings.ipv4 == .init(path: Self.eth0, connectivity: .full, reason: .expectedAnswer))
        #expect(keptSeen.withLock { $0 } == [nil], "nothing kept before the first answer")

        namesResolve.withLock { $0 = false }
        let asked = start + .seconds(10)
        checker.requestCheck(now: asked)
        #expect(try !Self.probe(checker, at: asked), "one failed name is confirmed before it is believed")
        #expect(checker.nextDeadline == asked + .milliseconds(500))
        #expect(try Self.probe(checker, at: asked + .milliseconds(500)))
        #expect(checker.findings.ipv4 == .init(path: Self.eth0, connectivity: .full, namesFail: true, reason: .expectedAnswer))
        #expect(keptSeen.withLock { $0 } == [nil, answered, answered], "the address that answered is asked")
        #expect(checker.nextDeadline == asked + .milliseconds(500) + .seconds(5), "retried from 5 s, as a failure")

        namesResolve.withLock { $0 = true }
        #expect(try Self.probe(checker, at: asked + .seconds(6)))
        #expect(checker.findings.ipv4 == .init(path: Self.eth0, connectivity: .full, reason: .expectedAnswer))
        #expect(checker.nextDeadline == asked + .seconds(6) + .seconds(300), "all well: the interval again")
    }

    /// The kernel found the gateway dead (its entry `FAILED`): `limited` at
    /// once, with no probe, retried from 5 s; its return (`REACHABLE`)
    /// asks for a probe as a client would, within the request spacing,
    /// once. A family `limited` by a probe keeps its schedule: a gateway
    /// answering there is no news, but one found dead there is awaited.
    @Test func aGatewayFoundDeadIsLimitedAtOnceAndItsReturnIsProbed() throws {
        let checker = try Self.checker()
        let start = ContinuousClock.now
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        #expect(!checker.gatewayFailed(.ipv6, now: start), "no IPv6 path: nothing to judge")
        checker.gatewayAnswered(.ipv4, now: start)
        #expect(checker.findings.ipv4 == nil && checker.nextDeadline == start, "not found dead: its answer is no news")
        #expect(!checker.awaitsGatewayReturn)

        let died = start + .seconds(60)
        #expect(checker.gatewayFailed(.ipv4, now: died))
        #expect(checker.findings.ipv4 == .init(path: Self.eth0, connectivity: .limited, reason: .gatewayUnanswered))
        #expect(checker.nextDeadline == died + ConnectivityChecker.firstRetry && checker.awaitsGatewayReturn)
        #expect(!checker.gatewayFailed(.ipv4, now: died + .seconds(3)), "FAILED again: no change")
        #expect(checker.nextDeadline == died + ConnectivityChecker.firstRetry, "and no new schedule")

        checker.gatewayAnswered(.ipv4, now: died + .seconds(1))
        #expect(checker.nextDeadline == died + .seconds(1), "no probe for 5 s: the return is probed at once")
        #expect(checker.isBusy(now: died + .seconds(1)) && !checker.awaitsGatewayReturn)
        checker.gatewayAnswered(.ipv4, now: died + .seconds(2))
        #expect(checker.nextDeadline == died + .seconds(1), "once")
    }

    /// A family a probe found `limited` (the check server refuses, say):
    /// the gateway's entry moving is no reason to probe sooner, unless the
    /// kernel found the gateway dead meanwhile.
    @Test func aFamilyLimitedByAProbeKeepsItsScheduleUntilItsGatewayDies() async throws {
        let checker = try Self.checker { _, _, _, _, _ in ProbeReport(.failed(.refused)) }
        let start = ContinuousClock.now
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        try Self.probe(checker, at: start)
        try Self.probe(checker, at: start + .milliseconds(500))
        #expect(checker.findings.ipv4?.connectivity == .limited)
        let scheduled = try #require(checker.nextDeadline)
        checker.gatewayAnswered(.ipv4, now: start + .seconds(1))
        #expect(checker.nextDeadline == scheduled, "REACHABLE while limited by a probe: its schedule stands")
        #expect(!checker.gatewayFailed(.ipv4, now: start + .seconds(2)), "limited already: no change")
        #expect(checker.awaitsGatewayReturn && checker.nextDeadline == scheduled)
        checker.gatewayAnswered(.ipv4, now: start + .seconds(3))
        #expect(checker.nextDeadline == start + .milliseconds(500) + ConnectivityChecker.requestInterval,
                "found dead, then back: probed as a request, 5 s after the last probe")
    }

    /// A gateway found dead stays awaited through the schedule's probes,
    /// however long it takes to come back: back 20 s later, probed at once.
    @Test func aGatewayFoundDeadIsAwaitedThroughTheSchedulesProbes() async throws {
        let checker = try Self.checker { _, _, _, _, _ in ProbeReport(.failed(.timeout)) }
        let start = ContinuousClock.now
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        #expect(checker.gatewayFailed(.ipv4, now: start))
        try Self.probe(checker, at: start + ConnectivityChecker.firstRetry)
        try Self.probe(checker, at: start + .seconds(15))
        #expect(checker.findings.ipv4?.connectivity == .limited)
        #expect(checker.awaitsGatewayReturn, "still dead: its return is news")
        checker.gatewayAnswered(.ipv4, now: start + .seconds(20))
        #expect(checker.nextDeadline == start + .seconds(20), "back 20 s later: probed at once")
    }

    /// The host's connections through the path fail: a probe decides, at
    /// once, and its failure needs no confirmation; a probe that answers
    /// keeps `full` (the failures were one server's).
    @Test func failingConnectionsAskAProbeThatDecides() async throws {
        let works = Mutex(true)
        let checker = try Self.checker { _, _, _, _, _ in
            works.withLock { $0 }
                ? ProbeReport(.answered(HTTPResponse(parsing: Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))!))
                : ProbeReport(.failed(.timeout))
        }
        let start = ContinuousClock.now
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        try Self.probe(checker, at: start)
        #expect(checker.findings.ipv4?.connectivity == .full)

        let failing = start + .seconds(60)
        #expect(checker.connectionsFail(.ipv4, now: failing))
        #expect(checker.nextDeadline == failing, "probed at once")
        #expect(try !Self.probe(checker, at: failing), "it answered: one server's failures")
        #expect(checker.findings.ipv4?.connectivity == .full && checker.findings.ipv4?.reason == .expectedAnswer)

        works.withLock { $0 = false }
        let dead = start + .seconds(120)
        #expect(checker.connectionsFail(.ipv4, now: dead))
        #expect(!checker.connectionsFail(.ipv4, now: dead), "asked already")
        #expect(try Self.probe(checker, at: dead), "believed without a confirmation")
        #expect(checker.findings.ipv4?.connectivity == .limited && checker.findings.ipv4?.reason == .connectionsFail)
        #expect(!checker.connectionsFail(.ipv4, now: dead + .seconds(10)), "limited already")
    }

    /// While `limited`, an answered connection asks for a probe, once per
    /// verdict of the schedule's: hints never probe more often than it.
    @Test func anAnsweredConnectionWhileLimitedAsksOneProbe() async throws {
        let checker = try Self.checker { _, _, _, _, _ in ProbeReport(.failed(.refused)) }
        let start = ContinuousClock.now
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        #expect(!checker.awaitsAnswers, "not limited: an answer is no news")
        try Self.probe(checker, at: start)
        try Self.probe(checker, at: start + .milliseconds(500))
        try Self.probe(checker, at: start + .milliseconds(5500))
        #expect(checker.findings.ipv4?.connectivity == .limited && checker.awaitsAnswers)
        #expect(checker.nextDeadline == start + .milliseconds(15500), "retried 10 s later")

        let answered = start + .seconds(12)
        checker.connectionAnswered(.ipv4, now: answered)
        #expect(checker.nextDeadline == answered, "probed at once: the last probe began 6.5 s ago")
        #expect(!checker.awaitsAnswers)
        try Self.probe(checker, at: answered)
        #expect(!checker.awaitsAnswers, "a hint's own probe found it limited: no more hints until the schedule's")
        let scheduled = try #require(checker.nextDeadline)
        checker.connectionAnswered(.ipv4, now: answered + .seconds(6))
        #expect(checker.nextDeadline == scheduled, "no probe sooner than the schedule's")
        try Self.probe(checker, at: scheduled)
        #expect(checker.awaitsAnswers, "the schedule's probe found it limited: an answer is news again")
    }

    /// The kept address answers, but not as expected (a portal's page, an
    /// error): that is no Internet, never a portal found by an address
    /// from another network, and never failing names.
    @Test func aKeptAddressThatAnswersOtherwiseIsLimited() async throws {
        let kept = CheckServerAddress(family: AF_INET, bytes: [2, 0, 0, 80, 192, 0, 2, 80] + Array(repeating: 0, count: 8))
        let answer = Mutex("HTTP/1.1 204 No Content\r\n\r\n")
        let checker = try Self.checker { _, _, _, keptNow, _ in
            let response = ProbeOutcome.answered(HTTPResponse(parsing: Array(answer.withLock { $0 }.utf8))!)
            guard let keptNow else { return ProbeReport(response, answeredAt: kept) }
            return ProbeReport(response, nameFailed: true, answeredAt: keptNow)
        }
        let start = ContinuousClock.now
        checker.observe(Self.status(ipv4: Self.eth0), now: start)
        try Self.probe(checker, at: start)
        answer.withLock { $0 = "HTTP/1.1 302 Found\r\nLocation: http://router.lan/\r\n\r\n" }
        checker.requestCheck(now: start + .seconds(10))
        try Self.probe(checker, at: start + .seconds(10))
        try Self.probe(checker, at: start + .seconds(10) + .milliseconds(500))
        #expect(checker.findings.ipv4 == .init(path: Self.eth0, connectivity: .limited, reason: .nameUnresolved), "\(checker.findings)")
    }
}
