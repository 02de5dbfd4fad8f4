import TestSupport
import Foundation

/// A DNS server in a network's gateway namespace, on 10.53.0.53 port 53 over
/// UDP: answers A queries for the names it was given an address, SRV queries
/// for those given `TARGET:PORT`, an empty answer for their other types,
/// NXDOMAIN for any other name. What a resolver behind the uplink looks like
/// to a host that has no route to it yet.
final class NameServer: @unchecked Sendable {
    static let address = "10.53.0.53"

    static let script = #"""
        import socket, struct, sys
        records = dict(pair.split("=") for pair in sys.argv[1:])
        server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        server.bind(("10.53.0.53", 53))
        def answer(query, client):
            labels, offset = [], 12
            while offset < len(query) and query[offset] != 0:
                length = query[offset]
                labels.append(query[offset + 1:offset + 1 + length].decode("ascii", "replace"))
                offset += 1 + length
            question = query[12:offset + 5]
            qtype = struct.unpack("!H", query[offset + 1:offset + 3])[0]
            name = ".".join(labels).lower()
            known = name in records
            answers = b""
            value = records.get(name, "")
            if known and qtype == 1 and ":" not in value:
                answers = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + socket.inet_aton(value)
            if known and qtype == 33 and ":" in value:
                target, port = value.rsplit(":", 1)
                # "." is RFC 2782's "no such service here": the root, no label.
                wire = b"".join(bytes([len(label)]) + label.encode() for label in target.split(".") if label) + b"\x00"
                data = struct.pack("!HHH", 0, 0, int(port)) + wire
                answers = b"\xc0\x0c" + struct.pack("!HHIH", 33, 1, 60, len(data)) + data
            flags = 0x8180 if known else 0x8183
            header = query[:2] + struct.pack("!HHHHH", flags, 1, 1 if answers else 0, 0, 0)
            server.sendto(header + question + answers, client)
        print("ready", flush=True)
        while True:
            query, client = server.recvfrom(512)
            try:
                answer(query, client)
            except Exception:
                pass  # a query too short to answer
        """#

    private let process: Subprocess

    /// Serves `records` (a name to an IPv4 address, or an SRV name such as
    /// `_api._tcp.example.test` to `TARGET:PORT`, `.:0` for RFC 2782's "no
    /// such service") from the gateway
    /// namespace, which gains the server's address.
    init(in network: TestNetwork, records: [String: String]) async throws {
        try await network.inGateway("addr add \(Self.address)/32 dev vg")
        let server = try Subprocess(
            ["/usr/bin/env", "ip", "netns", "exec", network.gateway, "/usr/bin/python3", "-c", Self.script]
                + records.map { "\($0.key)=\($0.value)" })
        process = server
        _ = try await eventually("the name server listens") { server.outputLines.first == "ready" ? true : nil }
    }

    deinit { process.signal(SIGKILL) }

    /// Makes this server the resolver of `network`'s host namespace, for
    /// whatever `ip netns exec` starts there (it mounts /etc/netns/HOST's
    /// files over /etc): the directory, for the caller to remove.
    func isTheResolver(of network: TestNetwork) throws -> URL {
        let etc = URL(fileURLWithPath: "/etc/netns/\(network.host)")
        try FileManager.default.createDirectory(at: etc, withIntermediateDirectories: true)
        try "nameserver \(Self.address)\noptions timeout:1 attempts:1\n".write(
            to: etc.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
        return etc
    }
}
