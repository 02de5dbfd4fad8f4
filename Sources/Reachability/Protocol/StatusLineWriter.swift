#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes a status line byte for byte as `JSONEncoder` with sorted keys and
/// unescaped slashes would, about ten times faster.
///
/// Written by hand because it sits on the event path: `JSONEncoder` took
/// 150–190 µs per status in the release daemon, more than the netlink read,
/// both route lookups and the writes to every subscriber together (70 µs). A
/// test encodes thousands of random statuses both ways and compares the bytes,
/// so the two can't drift apart; decoding still goes through `Codable`.
package struct StatusLineWriter {
    private let bytes: Output
    /// The interface list last written by this writer's owner, where it keeps one.
    private var memo: StatusLineMemo?

    package static func line(_ status: NetworkStatus) -> [UInt8] {
        var writer = StatusLineWriter(sizedFor: status, memo: nil)
        return writer.line(status)
    }

    /// The line, with the interface list's bytes taken from `memo` where
    /// the list is the one written last: a route change leaves the links
    /// as they were, and they are half of a full line.
    package static func line(_ status: NetworkStatus, memo: inout StatusLineMemo) -> [UInt8] {
        var writer = StatusLineWriter(sizedFor: status, memo: memo)
        defer { memo = writer.memo! }
        return writer.line(status)
    }

    private init(sizedFor status: NetworkStatus, memo: StatusLineMemo?) {
        // Room for the whole line: a status with two links and a handover
        // is about 1.5 KB, and each growth copies what was written.
        bytes = Output(capacity: 1024 + 256 * status.interfaces.count + 256 * status.changes.count)
        self.memo = memo
    }

    private mutating func line(_ status: NetworkStatus) -> [UInt8] {
        write(status)
        bytes.append(UInt8(ascii: "\n"))
        return bytes.array
    }

    /// The line as written so far, through a pointer: `Array.append` cost
    /// about a hundred instructions per literal, and the writer 42k of them
    /// per status, more than evaluating it (callgrind).
    private final class Output {
        private var base: UnsafeMutablePointer<UInt8>
        private(set) var count = 0
        private var capacity: Int

        init(capacity: Int) {
            self.capacity = max(capacity, 64)
            base = .allocate(capacity: self.capacity)
        }

        deinit { base.deallocate() }

        var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

        /// What was written from `start` on.
        func written(from start: Int) -> [UInt8] {
            Array(UnsafeBufferPointer(start: base + start, count: count - start))
        }

        func append(_ byte: UInt8) {
            if count == capacity { grow(to: count + 1) }
            base[count] = byte
            count += 1
        }

        func append(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            if count + bytes.count > capacity { grow(to: count + bytes.count) }
            (base + count).update(from: source, count: bytes.count)
            count += bytes.count
        }

        /// The digits written since `start`, put in order.
        func reverse(from start: Int) {
            var digits = UnsafeMutableBufferPointer(start: base + start, count: count - start)
            digits.reverse()
        }

        private func grow(to needed: Int) {
            let larger = max(needed, capacity * 2)
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
            moved.update(from: base, count: count)
            base.deallocate()
            base = moved
            capacity = larger
        }
    }

    // Keys in each object are in sorted order, as `.sortedKeys` writes them.
    private mutating func write(_ status: NetworkStatus) {
        raw("{\"changed_at\":")
        string(Timestamp.format(status.changedAt))
        raw(",\"changes\":")
        array(status.changes) { $0.write($1) }
        raw(",\"check\":")
        if let check = status.check {
            raw("{\"answer_within_ms\":")
            number(check.milliseconds)
            raw(",\"url\":")
            string(check.url)
            raw("}")
        } else {
            raw("null")
        }
        raw(",\"connectivity\":")
        string(status.connectivity.rawValue)
        raw(",\"connectivity_reason\":")
        optionalString(status.connectivityReason?.rawValue)
        if status.isSummary { raw(",\"detail\":\"summary\"") }
        raw(",\"dns\":{\"servers\":")
        array(status.dns.servers) { $0.write($1) }
        raw(",\"state\":")
        string(status.dns.state.rawValue)
        raw("}")
        raw(",\"families\":{\"ipv4\":")
        write(status.ipv4)
        raw(",\"ipv6\":")
        write(status.ipv6)
        raw("}")
        if !status.isSummary {
            raw(",\"interfaces\":")
            write(status.interfaces)
        }
        raw(",\"ipv4\":")
        string(status.ipv4.reachability.rawValue)
        raw(",\"ipv6\":")
        string(status.ipv6.reachability.rawValue)
        raw(",\"metered\":")
        bool(status.metered)
        raw(",\"netns\":")
        write(status.network)
        raw(",\"online\":")
        bool(status.online)
        raw(",\"portal_url\":")
        optionalString(status.portalURL)
        raw(",\"primary\":")
        write(status.primary)
        raw(",\"reachability\":")
        string(status.reachability.rawValue)
        raw(",\"seq\":")
        number(status.seq)
        raw(",\"source\":")
        string(status.source.rawValue)
        raw(",\"type\":\"status\",\"version\":")
        number(ProtocolVersion.current)
        if !status.isSummary {
            raw(",\"watched\":")
            array(status.watched) { $0.write($1) }
        }
        raw("}")
    }

    private mutating func write(_ change: StatusChange) {
        switch change {
        case .path(let family, let from, let to):
            raw("{\"family\":")
            string(family.rawValue)
            raw(",\"from\":")
            write(from)
            kind(change)
            raw(",\"to\":")
            write(to)
        case .reachability(let family, let from, let to):
            raw("{\"family\":")
            string(family.rawValue)
            raw(",\"from\":")
            string(from.rawValue)
            kind(change)
            raw(",\"to\":")
            string(to.rawValue)
        case .connectivity(let from, let to):
            raw("{\"from\":")
            string(from.rawValue)
            kind(change)
            raw(",\"to\":")
            string(to.rawValue)
        case .dns(let from, let to):
            raw("{\"from\":")
            string(from.rawValue)
            kind(change)
            raw(",\"to\":")
            string(to.rawValue)
        case .metered(let from, let to):
            raw("{\"from\":")
            bool(from)
            kind(change)
            raw(",\"to\":")
            bool(to)
        case .portalURL, .unrecognized:
            raw("{\"kind\":")
            string(change.kind)
        case .interfaces(let links, let more):
            raw("{\"kind\":")
            string(change.kind)
            raw(",\"links\":")
            array(links) { $0.string($1) }
            if more > 0 {
                raw(",\"more\":")
                number(more)
            }
        case .watched(let target, let from, let to):
            raw("{\"from\":")
            optionalString(from?.rawValue)
            kind(change)
            raw(",\"target\":")
            string(target)
            raw(",\"to\":")
            string(to.rawValue)
        }
        raw("}")
    }

    /// `,"kind":` and the change's kind: after `from`, before the rest.
    private mutating func kind(_ change: StatusChange) {
        raw(",\"kind\":")
        string(change.kind)
    }

    private mutating func write(_ target: DestinationStatus) {
        raw("{\"addresses\":")
        array(target.addresses) { writer, address in
            writer.raw("{\"address\":")
            writer.string(address.address)
            writer.raw(",\"family\":")
            writer.string(address.family.rawValue)
            writer.raw(",\"reason\":")
            writer.optionalString(address.reason?.rawValue)
            writer.raw(",\"state\":")
            writer.string(address.state.rawValue)
            writer.raw(",\"via\":")
            writer.write(address.via)
            writer.raw("}")
        }
        raw(",\"host\":")
        string(target.host)
        raw(",\"id\":")
        optionalString(target.id)
        raw(",\"port\":")
        number(target.port)
        raw(",\"reason\":")
        optionalString(target.reason?.rawValue)
        raw(",\"seq\":")
        number(target.seq)
        raw(",\"source\":")
        string(target.source.rawValue)
        raw(",\"state\":")
        string(target.state.rawValue)
        raw(",\"target\":")
        string(target.target)
        raw(",\"via\":")
        write(target.via)
        raw("}")
    }

    private mutating func write(_ server: DNSServer) {
        raw("{\"address\":")
        string(server.address)
        raw(",\"interface\":")
        optionalString(server.interface)
        raw(",\"reason\":")
        optionalString(server.reason?.rawValue)
        raw(",\"state\":")
        string(server.state.rawValue)
        raw("}")
    }

    private mutating func write(_ route: DestinationRoute?) {
        guard let route else { return raw("null") }
        openPath(route.family, route.gateway, route.index, route.interface)
        raw(",\"source\":")
        string(route.source)
        raw(",\"table\":")
        number(route.table)
        raw("}")
    }

    private mutating func write(_ network: NetworkNamespace?) {
        guard let network else { return raw("null") }
        // Without a cookie, the key is left out, as `Codable` leaves it.
        if let cookie = network.cookie {
            raw("{\"cookie\":")
            number(cookie)
            raw(",\"device\":")
        } else {
            raw("{\"device\":")
        }
        number(network.device)
        raw(",\"inode\":")
        number(network.inode)
        raw("}")
    }

    private mutating func write(_ family: FamilyStatus) {
        raw("{\"path\":")
        write(family.path)
        raw(",\"reachability\":")
        string(family.reachability.rawValue)
        raw(",\"reason\":")
        optionalString(family.reason?.rawValue)
        raw("}")
    }

    private mutating func write(_ path: NetworkPath?) {
        guard let path else { return raw("null") }
        openPath(path.family, path.gateway, path.index, path.interface)
        raw(",\"source\":")
        optionalString(path.source)
        raw("}")
    }

    /// The keys a status's path and a destination's route share, which
    /// sort first in both: the object opened, not closed.
    private mutating func openPath(_ family: AddressFamily, _ gateway: String?, _ index: Int, _ interface: String) {
        raw("{\"family\":")
        string(family.rawValue)
        raw(",\"gateway\":")
        optionalString(gateway)
        raw(",\"index\":")
        number(index)
        raw(",\"interface\":")
        string(interface)
    }

    /// The interface list: the memo's bytes where it holds this list. Equal
    /// as Swift compares strings: a link renamed to a canonically
    /// equivalent spelling alone (NFC to NFD) keeps the old bytes, as it
    /// publishes no new status (``NetworkStatus/describesSameNetwork(as:)``).
    private mutating func write(_ links: [InterfaceStatus]) {
        guard var memo else { return array(links) { $0.write($1) } }
        defer { self.memo = memo }
        if let written = memo.bytes, memo.interfaces == links {
            memo.reuses += 1
            return written.withUnsafeBufferPointer { bytes.append($0) }
        }
        let start = bytes.count
        array(links) { $0.write($1) }
        memo.interfaces = links
        memo.bytes = bytes.written(from: start)
    }

    private mutating func write(_ link: InterfaceStatus) {
        raw("{\"addresses\":")
        array(link.addresses) { writer, address in
            writer.raw("{\"address\":")
            writer.string(address.address)
            writer.raw(",\"family\":")
            writer.string(address.family.rawValue)
            writer.raw(",\"prefix\":")
            writer.number(address.prefix)
            writer.raw(",\"scope\":")
            writer.string(address.scope)
            writer.raw("}")
        }
        raw(",\"carrier\":")
        bool(link.carrier)
        raw(",\"index\":")
        number(link.index)
        raw(",\"loopback\":")
        bool(link.loopback)
        raw(",\"metered\":")
        string(link.metered.rawValue)
        raw(",\"name\":")
        string(link.name)
        raw(",\"operstate\":")
        string(link.operstate)
        raw(",\"up\":")
        bool(link.up)
        raw("}")
    }

    /// `[` the items, each written by `write`, separated by commas `]`.
    private mutating func array<Item>(_ items: [Item], _ write: (inout StatusLineWriter, Item) -> Void) {
        raw("[")
        for (position, item) in items.enumerated() {
            if position > 0 { raw(",") }
            write(&self, item)
        }
        raw("]")
    }

    // Literals are copied from their static bytes and numbers written digit
    // by digit: through `String` they were a third of the writer's time
    // (perf, one route change in-process).
    private mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append($0) }
    }

    private mutating func number(_ value: some BinaryInteger) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var rest = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes.reverse(from: start)
    }

    private mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    private mutating func optionalString(_ value: String?) {
        guard let value else { return raw("null") }
        string(value)
    }

    /// JSON's escapes as JSONEncoder writes them: the short forms where JSON
    /// has them, `\u00XX` for other control characters, everything else as is.
    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole from their storage.
        let copied: Bool? = value.utf8.withContiguousStorageIfAvailable { utf8 in
            guard utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
                return false
            }
            bytes.append(utf8)
            return true
        }
        if copied == true { return bytes.append(UInt8(ascii: "\"")) }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            case UInt8(ascii: "\n"): raw("\\n")
            case UInt8(ascii: "\r"): raw("\\r")
            case UInt8(ascii: "\t"): raw("\\t")
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                raw("\\u00")
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// The last interface list a ``StatusLineWriter`` wrote for its owner, and
/// its bytes: kept by whoever encodes one status after another (the
/// daemon's published lines, `reachd monitor --json` in-process), and
/// passed to ``StatusLineWriter/line(_:memo:)`` with each status.
package struct StatusLineMemo: Sendable {
    fileprivate var interfaces: [InterfaceStatus] = []
    /// `nil` until a list is written.
    fileprivate var bytes: [UInt8]?
    /// How many lines took the list's bytes from here: what a test counts.
    package fileprivate(set) var reuses = 0

    package init() {}
}
