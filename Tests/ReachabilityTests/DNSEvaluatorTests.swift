import Testing
@testable import Reachability

/// Name resolution judged from the kernel's route answers alone.
@Suite("DNS verdict")
struct DNSEvaluatorTests {
    static let first = IPAddress("192.0.2.53")!, second = IPAddress("2001:db8::53")!

    static func routed(_ address: IPAddress) -> AddressVerdict {
        let path = DestinationPath(interface: "eth0", index: 2, family: address.family, gateway: nil, table: 254, source: IPAddress("192.0.2.7")!)
        return AddressVerdict(address: address, reason: nil, via: path, lookup: nil)
    }

    static func unrouted(_ address: IPAddress) -> AddressVerdict {
        AddressVerdict(address: address, reason: .noRoute, via: nil, lookup: nil)
    }

    @Test func oneRoutableServerIsEnough() {
        let dns = DNSEvaluator.evaluate([Self.unrouted(Self.first), Self.routed(Self.second)])
        #expect(dns.state == .ok)
        #expect(dns.servers == [
            DNSServer(address: "192.0.2.53", state: .unreachable, reason: .noRoute, interface: nil),
            DNSServer(address: "2001:db8::53", state: .reachable, reason: nil, interface: "eth0"),
        ], "each server in the resolver's order, with its answer")
    }

    @Test func noRouteToAnyServerIsUnroutable() {
        let dns = DNSEvaluator.evaluate([Self.unrouted(Self.first), Self.unrouted(Self.second)])
        #expect(dns.state == .unroutable)
    }

    /// A server whose route answer was lost (the reply queue overran) is
    /// `unknown`, and so is the verdict while no other server is routable:
    /// not `unroutable`, which would say something of a route never seen.
    @Test func aLostAnswerIsUnknownUnlessAnotherServerIsRoutable() {
        let lost = DNSEvaluator.evaluate([Self.unrouted(Self.first), .unknown(Self.second)])
        #expect(lost.state == .unknown)
        #expect(lost.servers.map(\.state) == [.unreachable, .unknown])
        #expect(DNSEvaluator.evaluate([.unknown(Self.first), Self.routed(Self.second)]).state == .ok)
    }

    @Test func noServerIsNone() {
        #expect(DNSEvaluator.evaluate([]) == DNSStatus(state: .none, servers: []))
    }

    /// The check's finding that names fail turns a routed resolver's `ok`
    /// into `failing` and back; it says nothing where no server is
    /// configured or routed.
    @Test func namesFoundFailingMakeARoutedResolverFailing() {
        let routed = DNSEvaluator.evaluate([Self.routed(Self.first)])
        let failing = DNSEvaluator.evaluate(routed, namesFail: true)
        #expect(failing.state == .failing && failing.servers == routed.servers)
        #expect(DNSEvaluator.evaluate(failing, namesFail: false) == routed)
        for state in [DNSState.none, .unroutable, .unknown, .unrecognized("newer")] {
            #expect(DNSEvaluator.evaluate(DNSStatus(state: state, servers: []), namesFail: true).state == state)
        }
    }

    @Test func aStatusFromADaemonThatPredatesTheBlockSaysUnknown() throws {
        var line = Array(FakeDaemonLine.withoutDNS.utf8)
        guard case .status(let status) = try DaemonMessage.decode(line) else { Issue.record("not a status"); return }
        #expect(status.dns == .unknown)
        line = Array(FakeDaemonLine.withoutDNS.replacingOccurrences(
            of: #""connectivity":"unknown","#, with: #""connectivity":"unknown","dns":{"servers":[{"address":"192.0.2.53","interface":null,"reason":"no_route","state":"unreachable"}],"state":"resolver_on_fire"},"#).utf8)
        guard case .status(let newer) = try DaemonMessage.decode(line) else { Issue.record("not a status"); return }
        #expect(newer.dns.state == .unrecognized("resolver_on_fire"), "a newer daemon's verdict is a case, not a failure")
        #expect(newer.dns.servers.first?.reason == .noRoute)
    }
}

extension DNSEvaluatorTests {
    /// A status that differs only in its `dns` block is news, to summary
    /// subscribers too: the servers' routes moving alone is a `dns` change
    /// with the same state.
    @Test func aDNSChangeAloneIsPublished() throws {
        guard case .status(var before) = try DaemonMessage.decode(Array(FakeDaemonLine.withoutDNS.utf8)) else {
            Issue.record("the fixture line is not a status")
            return
        }
        before.dns = DNSEvaluator.evaluate([Self.routed(Self.first)])
        var after = before
        after.dns.servers[0].interface = "tun0"
        #expect(!after.hasSameSummary(as: before) && !after.summary().hasSameSummary(as: before.summary()))
        #expect(StatusDiff.changes(from: before, to: after) == [.dns(from: .ok, to: .ok)])
    }

    @Test func aMalformedBlockKeepsWhatItCan() throws {
        func dns(_ block: String) throws -> DNSStatus? {
            let line = FakeDaemonLine.withoutDNS.replacingOccurrences(
                of: #""connectivity":"unknown","#, with: #""connectivity":"unknown","dns":\#(block),"#)
            guard case .status(let status) = try DaemonMessage.decode(Array(line.utf8)) else { return nil }
            return status.dns
        }
        #expect(try dns(#"{"state":"ok","servers":"not a list"}"#) == DNSStatus(state: .ok, servers: []))
        #expect(try dns(#"{"servers":[]}"#) == .unknown)
        #expect(try dns(#""ok""#) == .unknown, "the status stands without the block")
    }
}

private enum FakeDaemonLine {
    static let withoutDNS = #"{"changed_at":"2026-11-21T05:10:00.123Z","connectivity":"unknown","families":{"ipv4":{"path":null,"reachability":"local","reason":"no_route"},"ipv6":{"path":null,"reachability":"local","reason":"no_route"}},"interfaces":[],"ipv4":"local","ipv6":"local","online":false,"reachability":"local","seq":7,"source":"daemon","type":"status","version":1}"#
}
