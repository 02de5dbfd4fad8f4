import Foundation
import TestSupport

/// A real resolver, dnsmasq, in the network's gateway namespace, answering
/// for its records alone (no upstream, no /etc/hosts, no configuration file).
final class Dnsmasq: @unchecked Sendable {
    private let process: Subprocess

    /// `records`: name → IPv4 address.
    init(in network: TestNetwork, listening address: String = "10.77.0.1", records: [String: String]) async throws {
        let arguments = ["--keep-in-foreground", "--no-daemon", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
                         "--user=root", "--pid-file=", "--bind-interfaces", "--listen-address=\(address)",
                         "--log-facility=-", "--log-queries"]
            + records.sorted { $0.key < $1.key }.map { "--host-record=\($0.key),\($0.value)" }
        process = try Subprocess(["/usr/bin/env", "ip", "netns", "exec", network.gateway, "/usr/sbin/dnsmasq"] + arguments)
        _ = try await eventually("dnsmasq answers") {
            let answer = try? await Subprocess.run(
                ["/usr/bin/env", "ip", "netns", "exec", network.gateway, "python3", "-c",
                 "import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.settimeout(0.2); "
                    + "s.sendto(bytes.fromhex('abcd01000001000000000000') + b'\\x00\\x00\\x01\\x00\\x01', ('\(address)', 53)); "
                    + "print(len(s.recv(512)))"])
            return answer?.status == 0 ? true : nil
        }
    }

    deinit { process.signal(SIGKILL) }

    /// What dnsmasq logged: the queries it answered.
    var log: String { process.errorOutput }
}
