import Reachability

/// One wake-up's events, sorted once by the service each is for, in the
/// order the daemon's loop serves them (``DaemonServer/run()``): its own
/// descriptors first, so that a change reaches every subscriber before any
/// client's request is read; the clients; the scrapers; the listeners last.
struct DaemonWakeUp {
    typealias Event = ReadinessEvent<DaemonEventToken>

    /// The stop signal fired.
    private(set) var stop = false
    /// Netlink and the resolver, in the order they came.
    private(set) var engine: [NetworkEngine.Input] = []
    private(set) var journalWritable = false
    private(set) var connectionsClosed = false
    private(set) var probesFinished = false
    private(set) var neighboursChanged = false
    private(set) var busReady = false
    private(set) var clients: [(serial: UInt64, event: Event)] = []
    private(set) var scrapers: [(token: MetricsService.Token, event: Event)] = []
    /// The metrics listener, served after every scraper accepted before.
    private(set) var metricsListener: Event?
    /// The socket's listener: new clients wait behind those already served.
    private(set) var acceptReady = false

    init(_ events: [Event]) {
        for event in events {
            switch event.token {
            case .stop: stop = true
            case .engine(let input): engine.append(input)
            case .journal: journalWritable = true
            case .connections: connectionsClosed = true
            case .checker: probesFinished = true
            case .neighbours: neighboursChanged = true
            case .bus: busReady = true
            case .client(let serial): clients.append((serial, event))
            case .metrics(.listener): metricsListener = event
            case .metrics(let token): scrapers.append((token, event))
            case .listener: acceptReady = true
            }
        }
    }
}
