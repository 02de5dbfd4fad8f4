import Reachability

/// Each client's well-formed request, in its turn, routed to the service
/// that answers it: the status from the published lines (``StatusFanOut``),
/// a connectivity check, or a destination. A client that leaves takes what
/// the services held for it.
final class RequestRouter: ClientRequestHandler {
    private let clients: ClientService
    private let fanOut: StatusFanOut
    private let destinations: DestinationService
    private let connectivity: ConnectivityService?
    private let engine: EngineService
    private let metrics: MetricsService

    init(
        clients: ClientService, fanOut: StatusFanOut, destinations: DestinationService,
        connectivity: ConnectivityService?, engine: EngineService, metrics: MetricsService
    ) {
        self.clients = clients
        self.fanOut = fanOut
        self.destinations = destinations
        self.connectivity = connectivity
        self.engine = engine
        self.metrics = metrics
    }

    func answer(_ request: ClientRequest, from client: ClientConnection, _ now: ContinuousClock.Instant) {
        switch request.operation {
        case .get:
            fanOut.deliverStatus(request.detail, to: client, now)
        case .subscribe:
            clients.subscribe(client, request.detail)
            fanOut.deliverStatus(request.detail, to: client, now)
        case .check:
            // Without a check, the answer is the status as it is.
            if connectivity?.request(for: client, detail: request.detail, now) != true {
                fanOut.deliverStatus(request.detail, to: client, now)
            }
        case .reach, .watch, .unwatch:
            destinations.serve(request, from: client, now)
            // Serving may watch /etc for a name's resolution: never netlink's, so it cannot fail.
            try? engine.registerNewDescriptors()
        }
    }

    func clientLeft(_ client: ClientConnection) {
        connectivity?.forget(client)
        destinations.remove(client)
        metrics.descriptorFreed()
    }
}
