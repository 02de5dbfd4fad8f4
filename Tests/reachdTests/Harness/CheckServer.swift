import TestSupport
import Foundation

/// A connectivity-check server in a network's gateway namespace, on
/// 10.77.0.1: answers every GET with what its state says (a status, headers,
/// a body), and counts the requests, so tests can see when a probe came and
/// that none did.
final class CheckServer: @unchecked Sendable {
    struct Answer: Encodable {
        var status: Int
        var headers: [String: String] = [:]
        var body = ""
    }

    static let script = #"""
        import http.server, json, socket, sys
        state, port, count = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_GET(self):
                with open(count, "a") as f:
                    f.write(self.path + "\n")
                answer = json.load(open(state))
                body = answer.get("body", "").encode()
                self.send_response(answer["status"])
                for name, value in answer.get("headers", {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        class DualStack(http.server.HTTPServer):
            address_family = socket.AF_INET6
            def server_bind(self):
                # IPv4 too, as ::ffff:10.77.0.1.
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                super().server_bind()
        server = DualStack(("::", port), Handler)
        print("ready", flush=True)
        server.serve_forever()
        """#

    let port: Int
    private let statePath: URL
    private let countPath: URL
    private var process: Subprocess?
    private let network: TestNetwork

    var url: String { "http://10.77.0.1:\(port)/generate_204" }
    /// The same server by its IPv6 address (it listens on both families).
    var ipv6URL: String { "http://[fd77::1]:\(port)/generate_204" }

    init(in network: TestNetwork, answering answer: Answer, port: Int = 8080) async throws {
        self.network = network
        self.port = port
        statePath = network.directory.appendingPathComponent("check-answer.json")
        countPath = network.directory.appendingPathComponent("check-requests")
        try answering(answer)
        try await start()
    }

    deinit { process?.signal(SIGKILL) }

    /// What every later request is answered with.
    func answering(_ answer: Answer) throws {
        try JSONEncoder().encode(answer).write(to: statePath, options: .atomic)
    }

    /// Requests served so far.
    var requests: Int {
        ((try? String(contentsOf: countPath, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    func start() async throws {
        let server = try Subprocess(["/usr/bin/env", "ip", "netns", "exec", network.gateway, "/usr/bin/python3", "-c",
                                     Self.script, statePath.path, "\(port)", countPath.path])
        process = server
        _ = try await eventually("the check server listens") { server.outputLines.first == "ready" ? true : nil }
    }

    /// Stops answering: connections are refused from now on.
    func stop() async throws {
        process?.signal(SIGKILL)
        try await process?.wait()
        process = nil
    }
}
