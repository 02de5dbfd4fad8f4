import ArgumentParser
import Logging
import Reachability

/// The daemon's flags, declared once: `reachd daemon --help`, the manual
/// and the shell completions come from here. Each is checked on its own in
/// ``validate()``; ``DaemonSettings`` merges them with reachd.conf.
struct DaemonOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where to listen. Default: $REACHD_SOCKET, else \(SocketPath.system) for root, else $XDG_RUNTIME_DIR/reachd.sock.",
            valueName: "path"),
        completion: .file())
    var socket: String?

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: Logger.Level = .info

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Clients served at once. Default: the open-file limit less \(ClientLimits.reservedDescriptors), at most \(ClientLimits.defaultCeiling).",
            valueName: "count"))
    var maxClients: Int?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Connections one user other than root may hold. Default: \(ClientLimits.defaultPerUser), or a quarter of --max-clients if less.",
            valueName: "count"))
    var maxClientsPerUser: Int?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Close a client that has not subscribed and moves no data for this many seconds. Default: \(ClientLimits.defaultIdleTimeout.components.seconds).",
            valueName: "seconds"))
    var idleTimeout: Double?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Destination watches (and reach answers to come) one connection may hold. Default: \(DestinationLimits.defaultPerConnection).",
            valueName: "count"))
    var maxWatchesPerConnection: Int?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Destination watches and unanswered reach requests one user may hold. Default: \(DestinationLimits.defaultPerUser).",
            valueName: "count"))
    var maxWatchesPerUser: Int?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Destination watches the daemon holds in all; each costs a route lookup per address after every routing change. Default: \(DestinationLimits.defaultTotal).",
            valueName: "count"))
    var maxWatches: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The configuration file (keyfile format, every key documented in the shipped file). Default: \(ConfigurationFile.defaultPath), where a missing file is an empty one; a file named here must be there (/dev/null: none).",
            valueName: "path"),
        completion: .file(extensions: ["conf"]))
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run the connectivity check against this plain-HTTP URL (http://HOST[:PORT]/PATH): connectivity becomes full, portal or limited, and online needs full. Overrides [connectivity] url.",
            valueName: "url"))
    var checkURL: String?

    @Flag(name: .long, help: "No connectivity check, whatever the configuration says: connectivity stays unknown.")
    var noCheck = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What counts as online: status:CODE, header:NAME: VALUE or body:TEXT. Default: [connectivity] expect, else status:204.",
            valueName: "answer"))
    var checkExpect: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Seconds a check may take, its one retry included. Default: [connectivity] timeout, else 5.", valueName: "seconds"))
    var checkTimeout: Double?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds between checks of an unchanged path while the answer is full. Default: [connectivity] interval, else 300.",
            valueName: "seconds"))
    var checkInterval: Double?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve Prometheus metrics over HTTP (GET /metrics) at ADDRESS[:PORT], PORT (on 127.0.0.1) or yes (127.0.0.1:\(MetricsSettings.defaultPort)). Overrides [metrics] listen.",
            valueName: "address"))
    var metricsListen: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Write the metrics to this .prom file for node_exporter's textfile collector, on every change. Overrides [metrics] textfile.",
            valueName: "path"),
        completion: .file(extensions: ["prom"]))
    var metricsTextfile: String?

    @Option(
        name: .customLong("watch"),
        help: ArgumentHelp(
            "A destination the daemon watches itself (HOST[:PORT], port 443 if none, or an http or https URL), for the metrics; repeat for more. Replaces [watch] targets.",
            valueName: "target"))
    var watchTargets: [String] = []

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "How many destinations the daemon may watch itself (--watch, [watch] targets). Default: \(WatchedTargets.defaultLimit).",
            valueName: "count"))
    var maxWatchedTargets: Int?

    /// For `make bench` (bench/passive.py): every closed connection read,
    /// as without the kernel's filter, to measure what the filter saves.
    @Flag(name: .customLong("passive-unfiltered"), help: .hidden)
    var passiveUnfiltered = false

    func validate() throws {
        try SocketArgument.check(socket)
        let counts = [
            ("--max-clients", maxClients), ("--max-clients-per-user", maxClientsPerUser),
            ("--max-watches-per-connection", maxWatchesPerConnection), ("--max-watches-per-user", maxWatchesPerUser),
            ("--max-watches", maxWatches), ("--max-watched-targets", maxWatchedTargets),
        ]
        for (flag, value) in counts {
            if let value, value < 1 { throw ValidationError("\(flag) must be at least 1, not \(value).") }
        }
        let times: [(String, Double?, SecondsRange)] = [
            ("--idle-timeout", idleTimeout, .idleTimeout), ("--check-timeout", checkTimeout, .checkTimeout),
            ("--check-interval", checkInterval, .checkInterval),
        ]
        for (flag, value, range) in times {
            if let value, range.duration(value) == nil {
                throw ValidationError("\(flag) must be \(range), not \(value).")
            }
        }
        do throws(ConnectivityCheckError) {
            if let checkURL { _ = try ConnectivityCheck.target(of: checkURL) }
            if let checkExpect { _ = try ConnectivityCheck.parseExpectation(checkExpect) }
        } catch {
            throw ValidationError("\(error)")
        }
        do throws(SettingError) {
            if let metricsListen { _ = try MetricsSettings.Address.parse(metricsListen) }
            if let metricsTextfile { try MetricsSettings.checkTextfile(metricsTextfile) }
        } catch {
            throw ValidationError("--metrics-\(metricsListen != nil ? "listen" : "textfile"): \(error)")
        }
        do throws(SettingError) {
            _ = try WatchedTargets.parse(watchTargets, limit: maxWatchedTargets ?? WatchedTargets.defaultLimit)
        } catch {
            throw ValidationError("--watch: \(error)")
        }
        if noCheck && checkURL != nil { throw ValidationError("--no-check and --check-url exclude each other; pick one.") }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
