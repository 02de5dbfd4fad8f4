import Foundation
import Testing
import TestSupport

/// A bench is code: `make test` runs each script in bench/ once, at its
/// smallest (`--tiny`: a few flips, a few subscribers, seconds instead of
/// minutes), so that none rots unseen, as bench/latency.py's fan-out once
/// did (a NameError nobody ran). The figures are `make bench`'s and are not
/// asserted here; the run to its end, and the line that says it measured,
/// are. Two groups, each one bench at a time: one sequence alone was make
/// test's longest suite by 50 s.
enum Benches {
    /// Each script and a line its tiny run prints once it has measured.
    static let daemonAndClients: [(script: String, measured: String)] = [
        ("reachd_bench.py", "overrun resyncs:"),
        ("torture.py", "seq before a restart"),
        ("containers.py", "got the route flip after it"),
        ("destinations.py", "watches, 1 s under strace -c -f:"),
        ("gio.py", "spurious signals; the removal afterwards:"),
        ("monitor_cost.py", "destinations: +"),
        ("instructions.py", "monitor --json through the daemon"),
    ]
    static let pathsAndLatency: [(script: String, measured: String)] = [
        ("expiry.py", "after the lookup failed"),
        ("metrics.py", "daemon CPU per scrape:"),
        ("deadgateway.py", "entry fresh when it died: verdict p50"),
        ("lossy.py", "saying broken"),
        ("passive.py", "passive: verdict p50"),
        ("removal.py", "removals left standing"),
        ("latency.py", "wake-ups in 1 s"),
    ]
    static let all = daemonAndClients + pathsAndLatency

    static let folder = packageRoot.appendingPathComponent("bench")

    static func runTiny(_ script: String) async throws {
        let measured = try #require(all.first { $0.script == script }?.measured)
        let bench = try await Subprocess.run(
            ["/usr/bin/env", "REACHD=\(Reachd.binary)", "/usr/bin/python3", folder.appendingPathComponent(script).path,
             "--tiny"],
            timeout: .seconds(110))
        // The error's last line first: a CI excerpt shows a message's first line only.
        let lastError = bench.error.split(separator: "\n").last ?? "nothing on stderr"
        #expect(bench.status == 0, "\(script): \(lastError)\n\(bench.output.suffix(3000))\n\(bench.error.suffix(3000))")
        #expect(bench.output.contains(measured), "\(script) said what it measured: \(bench.output.suffix(3000))")
    }
}

/// The two groups run beside each other, each one bench at a time.
@Suite("Every bench, tiny", .enabled(if: NamespaceSupport.available, NamespaceSupport.reason))
struct BenchTests {
    @Test(.timeLimit(.minutes(4)), arguments: [Benches.daemonAndClients, Benches.pathsAndLatency])
    func eachRunsToItsEnd(group: [(script: String, measured: String)]) async throws {
        for bench in group { try await Benches.runTiny(bench.script) }
    }

    /// `make bench` runs every script (bench/run.sh), and this suite runs
    /// each of those: a new bench is run tiny too, or this fails.
    @Test func everyBenchMakeBenchRunsIsRunTiny() throws {
        let runner = try String(contentsOf: Benches.folder.appendingPathComponent("run.sh"), encoding: .utf8)
        let run = Set(runner.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard let script = words.first(where: { $0.hasPrefix("bench/") && $0.hasSuffix(".py") }) else { return nil }
            return String(script.dropFirst("bench/".count))
        })
        #expect(!run.isEmpty, "read the scripts run.sh runs")
        #expect(run == Set(Benches.all.map(\.script)), "run by make bench: \(run.sorted())")
    }
}
