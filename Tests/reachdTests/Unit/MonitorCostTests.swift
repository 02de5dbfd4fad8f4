import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// One monitor following the status and many destinations costs what one
/// destination costs: one thread and a few descriptors, through a daemon
/// (one connection carries every watch) and in-process (one engine answers
/// them all). `bench/MonitorCost` measures a process of its own, so that no
/// other test's threads and sockets count.
@Suite("What a monitor costs")
struct MonitorCostTests {
    static let probe = URL(fileURLWithPath: Reachd.binary).deletingLastPathComponent().appendingPathComponent("MonitorCost").path

    struct Cost: Decodable, CustomStringConvertible {
        struct Before: Decodable {
            var before: Int
            var after: Int
        }

        var destinations: Int
        var answered: Int
        var answers_from: [String: Int]
        var threads: Before
        var descriptors: Before

        var addedThreads: Int { threads.after - threads.before }
        var addedDescriptors: Int { descriptors.after - descriptors.before }
        var description: String {
            "\(destinations) destinations: +\(addedThreads) threads, +\(addedDescriptors) descriptors, answers from \(answers_from)"
        }
    }

    static func cost(_ destinations: Int, _ source: String, socket: String? = nil) async throws -> Cost {
        let run = try await Subprocess.run([probe, String(destinations), source] + (socket.map { [$0] } ?? []))
        #expect(run.status == 0, "\(run.error)")
        return try JSONDecoder().decode(Cost.self, from: Data(run.output.utf8))
    }

    @Test(arguments: ["daemon", "embedded"])
    func sixtyFourDestinationsCostWhatOneCosts(_ source: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-cost-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("reachd.sock").path
        let daemon = source == "daemon" ? try Subprocess([Reachd.binary, "daemon", "--socket", socket, "--no-check"]) : nil
        defer { daemon?.signal(SIGTERM) }
        if let daemon {
            // Said with the daemon's own words: a loaded run once saw no answer in 30 s.
            do { _ = try await daemonAnswers(at: socket) } catch {
                Issue.record("\(error); running: \(daemon.isRunning); its log: \(daemon.errorOutput.suffix(2000))")
                return
            }
        }
        let one = try await Self.cost(1, source, socket: daemon == nil ? nil : socket)
        let many = try await Self.cost(64, source, socket: daemon == nil ? nil : socket)
        for cost in [one, many] {
            #expect(cost.answered == cost.destinations && cost.answers_from == [source: cost.destinations], "\(cost)")
            #expect(cost.addedThreads <= 8 && cost.addedDescriptors <= 20, "\(cost)")
        }
        // A probe of the daemon's liveness may be open at the moment of
        // counting (the kernel reported something): one descriptor of slack.
        #expect(many.addedThreads == one.addedThreads, "\(one); \(many)")
        #expect(abs(many.addedDescriptors - one.addedDescriptors) <= 1, "\(one); \(many)")
        daemon?.signal(SIGTERM)
        _ = try await daemon?.wait()
    }
}
