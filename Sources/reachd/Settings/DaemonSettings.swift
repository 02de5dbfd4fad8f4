import Reachability

/// What the daemon runs with: its flags and reachd.conf merged, a flag
/// winning over the file, with every value of the file checked here, once,
/// whether or not it is used: a mistake shows when it is made, naming the
/// file and the line, not on the day the setting is switched on. But for
/// `--no-check`, which leaves `[connectivity]` unread, whatever it says: the
/// way out of a section that stops the daemon. The file is read once, by
/// the caller.
struct DaemonSettings: Equatable {
    /// Clients served at once; `nil`: derived from the descriptor limit
    /// (``ClientLimits``), known only once the daemon raised it.
    var maxClients: Int?
    var maxClientsPerUser: Int?
    var idleTimeout: Duration
    var destinationLimits: DestinationLimits
    /// The connectivity check; `nil` when neither asks for one or
    /// `--no-check` says no.
    var check: ConnectivityCheck?
    /// `[connectivity] passive`: when the host's failing connections raise
    /// a suspicion; `nil` when turned off.
    var passive: ConnectionEvidence.Threshold?
    /// `--passive-unfiltered`, for the bench: no socket filter.
    var passiveUnfiltered = false
    /// `[metered]`: interfaces the configuration says are metered or not,
    /// overriding the guess from the link's kind.
    var meteredOverrides: [String: Bool]
    /// `[metrics]`: the HTTP listener and the textfile, each off unless set.
    var metrics: MetricsSettings
    /// `[watch] targets`, or the `--watch` flags instead: what the daemon
    /// watches itself, for the metrics.
    var watchedTargets: [Destination]
    /// The configuration file read; `nil` when the default one is absent.
    var configuration: String?

    /// - Parameters:
    ///   - options: the flags, each already checked on its own
    ///     (``DaemonOptions/validate()``).
    ///   - file: reachd.conf, `nil` when there is none.
    init(_ options: DaemonOptions, file: ConfigurationFile?) throws {
        maxClients = options.maxClients
        maxClientsPerUser = options.maxClientsPerUser
        // The flags were checked in validate().
        idleTimeout = options.idleTimeout.map { SecondsRange.idleTimeout.duration($0)! } ?? ClientLimits.defaultIdleTimeout
        destinationLimits = DestinationLimits(
            perConnection: options.maxWatchesPerConnection ?? DestinationLimits.defaultPerConnection,
            perUser: options.maxWatchesPerUser ?? DestinationLimits.defaultPerUser,
            total: options.maxWatches ?? DestinationLimits.defaultTotal)
        configuration = file?.path
        var metered: [String: Bool] = [:]
        for name in file?.keys(in: "metered") ?? [] { metered[name] = try file?.bool("metered", name) }
        meteredOverrides = metered
        check = try Self.check(options, file)
        passive = try Self.passive(options, file)
        passiveUnfiltered = options.passiveUnfiltered
        metrics = try Self.metrics(options, file)
        watchedTargets = try Self.watchedTargets(options, file)
    }

    /// A value of the file checked by `check`, its error naming the line.
    private static func checked<T>(
        _ file: ConfigurationFile?, _ section: String, _ key: String, _ check: (String) throws(SettingError) -> T
    ) throws -> T? {
        guard let file, let value = file.string(section, key) else { return nil }
        do throws(SettingError) { return try check(value) } catch {
            throw ConfigurationError.invalid(path: file.path, line: file.line(section, key)!, reason: "\(key): \(error)")
        }
    }

    private static func metrics(_ options: DaemonOptions, _ file: ConfigurationFile?) throws -> MetricsSettings {
        // `listen = no` and an empty `textfile =` are the defaults said aloud.
        let fileListen = try checked(file, "metrics", "listen") { (value) throws(SettingError) -> MetricsSettings.Address? in
            value == "no" ? nil : try MetricsSettings.Address.parse(value)
        }
        let fileTextfile = try checked(file, "metrics", "textfile") { (value) throws(SettingError) -> String? in
            if value.isEmpty { return nil }
            try MetricsSettings.checkTextfile(value)
            return value
        }
        let hosts = try checked(file, "metrics", "hosts") { (value) throws(SettingError) in try MetricsSettings.parseHosts(value) }
        // The flags were checked in validate().
        return MetricsSettings(
            listen: try options.metricsListen.map(MetricsSettings.Address.parse) ?? fileListen ?? nil,
            textfile: options.metricsTextfile ?? fileTextfile ?? nil, hosts: hosts ?? [])
    }

    private static func watchedTargets(_ options: DaemonOptions, _ file: ConfigurationFile?) throws -> [Destination] {
        let limit = options.maxWatchedTargets ?? WatchedTargets.defaultLimit
        let fromFile = try checked(file, "watch", "targets") { (value) throws(SettingError) in
            try WatchedTargets.parse(WatchedTargets.split(value), limit: limit)
        }
        guard options.watchTargets.isEmpty else { return try WatchedTargets.parse(options.watchTargets, limit: limit) }
        return fromFile ?? []
    }

    /// The passive watch's threshold, from `[connectivity]`: on unless
    /// `passive = no`. Unread, as the rest of the section, under `--no-check`.
    private static func passive(_ options: DaemonOptions, _ file: ConfigurationFile?) throws -> ConnectionEvidence.Threshold? {
        let section = "connectivity"
        guard let file, !options.noCheck else { return ConnectionEvidence.Threshold() }
        let on = try file.bool(section, "passive")
        var threshold = ConnectionEvidence.Threshold()
        if let failures = try file.integer(section, "passive_failures", in: 1...1000) { threshold.failures = failures }
        if let peers = try file.integer(section, "passive_peers", in: 1...1000) { threshold.peers = peers }
        if let window = try file.duration(section, "passive_window", in: .passiveWindow) { threshold.window = window }
        if threshold.peers > threshold.failures {
            throw ConfigurationError.invalid(
                path: file.path, line: file.line(section, "passive_peers")!,
                reason: "passive_peers = \(threshold.peers) is more than passive_failures = \(threshold.failures); lower it, or raise passive_failures")
        }
        return on == false ? nil : threshold
    }

    /// The check the flags and the file ask for.
    private static func check(_ options: DaemonOptions, _ file: ConfigurationFile?) throws -> ConnectivityCheck? {
        guard !options.noCheck else { return nil }
        let section = "connectivity"
        let enabled = try file?.bool(section, "enabled")
        let fileTimeout = try file?.duration(section, "timeout", in: .checkTimeout)
        let fileInterval = try file?.duration(section, "interval", in: .checkInterval)
        if let file, let url = file.string(section, "url") {
            do throws(ConnectivityCheckError) {
                _ = try ConnectivityCheck.target(of: url)
            } catch {
                throw ConfigurationError.invalid(path: file.path, line: file.line(section, "url")!, reason: error.description)
            }
        }
        if let file, let expect = file.string(section, "expect") {
            do throws(ConnectivityCheckError) { _ = try ConnectivityCheck.parseExpectation(expect) } catch {
                throw ConfigurationError.invalid(path: file.path, line: file.line(section, "expect")!, reason: error.description)
            }
        }
        if let file, enabled == true, file.string(section, "url") == nil {
            throw ConfigurationError.invalid(
                path: file.path, line: file.line(section, "enabled")!, reason: "enabled = yes needs url = http://HOST[:PORT]/PATH")
        }
        guard let url = options.checkURL ?? (enabled == false ? nil : file?.string(section, "url")) else { return nil }
        let expect = options.checkExpect ?? file?.string(section, "expect") ?? "status:204"
        let timeout = options.checkTimeout.flatMap(SecondsRange.checkTimeout.duration) ?? fileTimeout ?? .seconds(5)
        let interval = options.checkInterval.flatMap(SecondsRange.checkInterval.duration) ?? fileInterval ?? .seconds(300)
        return try ConnectivityCheck.parse(
            url: url, expectation: ConnectivityCheck.parseExpectation(expect), timeout: timeout, interval: interval)
    }
}
