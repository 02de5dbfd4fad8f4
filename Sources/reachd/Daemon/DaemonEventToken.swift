import Reachability

/// What a descriptor in the daemon's event poll is, as the service that owns
/// it names it: the router hands each event to that service.
///
/// epoll carries 64 bits: the kind goes in the top byte and a connection's
/// serial below it, so that no service's numbers can run into another's
/// (they were ranges once, each starting where another had to end).
enum DaemonEventToken: EventToken, Equatable {
    /// The stop signal (SIGTERM, SIGINT).
    case stop
    /// The Unix socket's listener.
    case listener
    /// A client connection, by its serial.
    case client(UInt64)
    /// The engine's sockets: netlink, the resolver's wake pipe, the /etc watch.
    case engine(NetworkEngine.Input)
    /// The connectivity checker's wake pipe.
    case checker
    /// The gateways' neighbour entries, for the connectivity check.
    case neighbours
    /// The system bus, for logind's resume signal.
    case bus
    /// The host's closed TCP connections, the passive evidence.
    case connections
    /// The metrics' listener and its scrapers.
    case metrics(MetricsService.Token)
    /// journald's socket, while entries wait for room in its queue.
    case journal

    /// Each case's number in the top byte; never reused, so that a newer
    /// case can't be read as an older one.
    private enum Kind: UInt8 {
        case stop = 1, listener, client, netlink, resolver, resolverFiles, checker, metricsListener, scraper, journal,
            neighbours, bus, connections
    }

    private static let serialBits: UInt64 = 56
    /// A serial fits below the kind: 2^56 connections is beyond any daemon's life.
    static let maxSerial: UInt64 = (1 << serialBits) - 1

    init?(eventData: UInt64) {
        guard let kind = Kind(rawValue: UInt8(eventData >> Self.serialBits)) else { return nil }
        let serial = eventData & Self.maxSerial
        switch kind {
        case .stop: self = .stop
        case .listener: self = .listener
        case .client: self = .client(serial)
        case .netlink: self = .engine(.netlink)
        case .resolver: self = .engine(.resolver)
        case .resolverFiles: self = .engine(.resolverFiles)
        case .checker: self = .checker
        case .neighbours: self = .neighbours
        case .bus: self = .bus
        case .connections: self = .connections
        case .metricsListener: self = .metrics(.listener)
        case .scraper: self = .metrics(.scraper(serial))
        case .journal: self = .journal
        }
    }

    var eventData: UInt64 {
        let (kind, serial): (Kind, UInt64) =
            switch self {
            case .stop: (.stop, 0)
            case .listener: (.listener, 0)
            case .client(let serial): (.client, serial)
            case .engine(.netlink): (.netlink, 0)
            case .engine(.resolver): (.resolver, 0)
            case .engine(.resolverFiles): (.resolverFiles, 0)
            case .checker: (.checker, 0)
            case .neighbours: (.neighbours, 0)
            case .bus: (.bus, 0)
            case .connections: (.connections, 0)
            case .metrics(.listener): (.metricsListener, 0)
            case .metrics(.scraper(let serial)): (.scraper, serial)
            case .journal: (.journal, 0)
            }
        precondition(serial <= Self.maxSerial, "a serial above 2^56 - 1")
        return UInt64(kind.rawValue) << Self.serialBits | serial
    }
}
