import Logging
import Reachability

/// The clients' destinations as a service of the daemon's loop: `reach`,
/// `watch` and `unwatch` served from ``DestinationWatches``, the watched
/// destinations looked up again when what their answers rest on moved, and
/// each answer written to the client it is for. A failed route lookup is
/// logged and answered (`lookup_failed`), never the end of the loop.
final class DestinationService {
    private let watches: DestinationWatches
    private let clients: ClientService
    private let logger: Logger

    init(limits: DestinationLimits, engine: NetworkEngine, clients: ClientService, logger: Logger) {
        watches = DestinationWatches(limits: limits, engine: engine)
        self.clients = clients
        self.logger = logger
    }

    /// Serves `request` from `client`: its answer, and the new answers of
    /// every other watcher that the evaluation moved.
    func serve(_ request: ClientRequest, from client: ClientConnection, _ now: ContinuousClock.Instant) {
        do {
            send(try watches.serve(request, from: client, now: now), now)
        } catch {
            logger.error("a route lookup for a destination failed", metadata: ["error": "\(error)"])
            let refusal = DaemonMessage.error(
                code: RequestError.lookupFailed, message: "the kernel's route lookup failed (\(error)); try again", id: request.id)
            clients.deliver(refusal.line(), to: client, now, stream: .answer)
        }
    }

    /// Looks up the watched destinations again, when anything their answers
    /// rest on moved: the answers that changed, for their clients, to send
    /// once the host's own change is out.
    func evaluateChanged(_ now: ContinuousClock.Instant) -> [DestinationWatches.Delivery] {
        do {
            // Timed only for the debug log: `make bench` reads the longest.
            let started = logger.logLevel <= .debug ? ContinuousClock.now : nil
            guard let deliveries = try watches.evaluateChanged(now: now) else { return [] }
            if let started, watches.count > 0 {
                let elapsed = ContinuousClock.now - started
                logger.debug("evaluated watched destinations", metadata: [
                    "destinations.count": "\(watches.count)",
                    "destinations.changed": "\(deliveries.count)",
                    "destinations.evaluation_us": "\(elapsed.components.attoseconds / 1_000_000_000_000 + elapsed.components.seconds * 1_000_000)",
                ])
            }
            return deliveries
        } catch {
            // The query socket failed; the next wake-up asks again, and a
            // socket that keeps failing is reopened by the status's own evaluation.
            logger.error("route lookups for watched destinations failed", metadata: ["error": "\(error)"])
            return []
        }
    }

    /// Writes each answer to its client, if it is still connected.
    func send(_ deliveries: [DestinationWatches.Delivery], _ now: ContinuousClock.Instant) {
        for delivery in deliveries where clients.contains(delivery.client) {
            clients.deliver(delivery.line, to: delivery.client, now, stream: delivery.stream)
            clients.settle(delivery.client)
        }
    }

    /// `client` left: its watches and waiting `reach` requests go.
    func remove(_ client: ClientConnection) { watches.remove(client) }
}
