import Testing
@testable import reachd

/// The 64 bits epoll carries back must name the same descriptor they were
/// given for: a scraper's event read as a client's would serve the wrong one.
@Suite("The daemon's event tokens")
struct DaemonEventTokenTests {
    static let tokens: [DaemonEventToken] = [
        .stop, .listener, .checker, .neighbours, .bus, .connections, .journal, .engine(.netlink), .engine(.resolver), .engine(.resolverFiles),
        .metrics(.listener), .client(1), .client(DaemonEventToken.maxSerial), .metrics(.scraper(1)),
        .metrics(.scraper(DaemonEventToken.maxSerial)),
    ]

    @Test(arguments: tokens)
    func eachTokenComesBackAsItself(token: DaemonEventToken) {
        #expect(DaemonEventToken(eventData: token.eventData) == token)
    }

    @Test func noTwoTokensShareTheirBits() {
        #expect(Set(Self.tokens.map(\.eventData)).count == Self.tokens.count)
        // A client and a scraper with the same serial: their counters both start at 1.
        #expect(DaemonEventToken.client(7).eventData != DaemonEventToken.metrics(.scraper(7)).eventData)
    }

    @Test(arguments: [0, UInt64(0xff) << 56, UInt64(0x40) << 56])
    func bitsNoTokenWasGivenNameNone(eventData: UInt64) {
        #expect(DaemonEventToken(eventData: eventData) == nil)
    }
}
