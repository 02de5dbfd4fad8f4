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
        let dns = DNSEvaluator.evaluate([Self.first, Self.second], verdicts: [Self.unrouted(Self.first), Self.routed(Self.second)])
        #expect(dns.state == .ok)
        #expect(dns.servers == [
            DNSServer(address: "192.0.2.53", state: .unreachable, reason: .noRoute, interface: nil),
            DNSServer(address: "2001:db8::53", state: .reachable, reason: nil, interface: "eth0"),
        ], "each server in the resolver's order, with its answer")
    }

    @Test func noRouteToAnyServerIsUnroutable() {
        let dns = DNSEvaluator.evaluate([Self.first, Self.second], verdicts: [Self.unrouted(Self.first), Self.unrouted(Self.second)])
        #expect(dns.state == .unroutable)
    }

    @Test func noServerIsNone() {
        #expect(DNSEvaluator.evaluate([], verdicts: []) == DNSStatus(state: .none, servers: []))
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

private enum FakeDaemonLine {
    static let withoutDNS = #"{"changed_at":"2026-11-21T05:10:00.123Z","connectivity":"unknown","families":{"ipv4":{"path":null,"reachability":"local","reason":"no_route"},"ipv6":{"path":null,"reachability":"local","reason":"no_route"}},"interfaces":[],"ipv4":"local","ipv6":"local","online":false,"reachability":"local","seq":7,"source":"daemon","type":"status","version":1}"#
}
