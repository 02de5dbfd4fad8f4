import Foundation
import Testing
@testable import Reachability
@testable import reachd
import TestSupport

/// The lines a status is sent as: news with its changes, a reader's first
/// with none, and, for a reader too slow to be sent every status, one line
/// that tells it everything the line it replaces would have.
@Suite("Published lines")
struct PublishedLinesTests {
    static let eth0 = NetworkPath(interface: "eth0", index: 2, family: .ipv4, gateway: "10.0.0.1", source: "10.0.0.2")
    static let tun0 = NetworkPath(interface: "tun0", index: 9, family: .ipv4, gateway: nil, source: "10.8.0.2")

    static func status(_ path: NetworkPath, links: [String] = [], seq: UInt64, changes: [StatusChange]) -> NetworkStatus {
        .built(
            ipv4: .through(path),
            interfaces: links.enumerated().map {
                InterfaceStatus(name: $1, index: $0 + 1, up: true, carrier: true, operstate: "up", loopback: false, addresses: [])
            },
            seq: seq, changedAt: Date(timeIntervalSince1970: 1_800_000_000), changes: changes)
    }

    static func decoded(_ line: [UInt8]) throws -> NetworkStatus {
        guard case .status(let status) = try DaemonMessage.decode(line) else { throw CancellationError() }
        return status
    }

    @Test func aReadersFirstStatusHasNoChangesAndNewsHasThem() throws {
        let handover: [StatusChange] = [.path(.ipv4, from: Self.eth0, to: Self.tun0)]
        var lines = PublishedLines(Self.status(Self.eth0, seq: 1, changes: []))
        _ = lines.update(Self.status(Self.tun0, seq: 2, changes: handover))
        for detail in [StatusDetail.full, .summary] {
            let first = try Self.decoded(lines.first(detail)), news = try Self.decoded(lines.line(detail))
            #expect(first.changes.isEmpty && first.seq == 2)
            #expect(news.changes == handover && news.seq == 2)
        }
    }

    /// A veth appearing is news for full subscribers only; the summary
    /// line, its changes included, stays as the handover left it.
    @Test func aSummaryKeepsItsOwnChangesWhenOnlyLinksMove() throws {
        let handover: [StatusChange] = [.path(.ipv4, from: Self.eth0, to: Self.tun0)]
        var lines = PublishedLines(Self.status(Self.eth0, seq: 1, changes: []))
        let summaryMoved = lines.update(Self.status(Self.tun0, seq: 2, changes: handover))
        let summaryMovedAgain = lines.update(
            Self.status(Self.tun0, links: ["veth0"], seq: 3, changes: [.interfaces(links: ["veth0"])]))
        #expect(summaryMoved && !summaryMovedAgain)
        let full = try Self.decoded(lines.line(.full))
        #expect(full.changes == [.interfaces(links: ["veth0"])])
        let summary = try Self.decoded(lines.line(.summary))
        #expect(summary.changes == handover && summary.seq == 2)
    }

    /// A handover leaves the links as they were: the full lines, first and
    /// news, write the interface list once between them and once for the
    /// handover's news, and a veth appearing writes it anew. Counted, not
    /// timed (issue 45).
    @Test func aRouteChangeWritesTheInterfaceListOnce() throws {
        let links = ["eth0", "tun0"]
        var lines = PublishedLines(Self.status(Self.eth0, links: links, seq: 1, changes: []))
        _ = lines.first(.full)
        _ = lines.line(.full)
        #expect(lines.interfaceListsReused == 1, "the news took the first's list")
        _ = lines.update(Self.status(Self.tun0, links: links, seq: 2, changes: [.path(.ipv4, from: Self.eth0, to: Self.tun0)]))
        let news = try Self.decoded(lines.line(.full))
        #expect(lines.interfaceListsReused == 2 && news.interfaces.map(\.name) == links)
        _ = lines.update(Self.status(Self.tun0, links: links + ["veth0"], seq: 3, changes: [.interfaces(links: ["veth0"])]))
        let withVeth = try Self.decoded(lines.line(.full))
        #expect(lines.interfaceListsReused == 2 && withVeth.interfaces.map(\.name) == links + ["veth0"], "written anew")
    }

    @Test func aSlowReaderIsToldWhatTheLineItMissedWouldHaveSaid() throws {
        var lines = PublishedLines(Self.status(Self.eth0, seq: 1, changes: []))
        let missed: [StatusChange] = [.path(.ipv4, from: Self.eth0, to: Self.tun0)]
        _ = lines.update(Self.status(Self.eth0, seq: 3, changes: [.path(.ipv4, from: Self.tun0, to: Self.eth0)]))
        let merged = lines.line(.full, replacing: missed)
        #expect(merged.changes == [.path(.ipv4, from: Self.eth0, to: Self.eth0)])
        let status = try Self.decoded(merged.line)
        #expect(status.changes == merged.changes && status.seq == 3)
    }
}
