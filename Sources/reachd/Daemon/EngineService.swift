import Logging
import Reachability

/// The network engine in the daemon's loop: its descriptors (netlink, the
/// resolver's files) in the poll, each of its inputs read into the status,
/// and the routes behind the status asked again when they expire.
///
/// The engine reopens a failed netlink socket itself; the new descriptor
/// joins the poll here, where the old one left it when it was closed.
final class EngineService: DaemonService {
    let engine: NetworkEngine
    private let poll: EventPoll<DaemonEventToken>
    private let logger: Logger

    /// Registers every descriptor the started engine has.
    init(_ engine: NetworkEngine, poll: EventPoll<DaemonEventToken>, logger: Logger) throws {
        self.engine = engine
        self.poll = poll
        self.logger = logger
        _ = engine.takeNewDescriptors()
        for (input, fd) in engine.descriptors { try poll.add(fd, .engine(input), interest: .readable) }
    }

    /// A due destination or a route that expires: the kernel says nothing of either.
    var nextDeadline: ContinuousClock.Instant? { engine.nextDeadline }

    /// Its descriptors are never paused: the daemon is deaf without them.
    func endPass(_ now: ContinuousClock.Instant, poll: EventPoll<DaemonEventToken>) {}

    /// The status to publish, when reading `inputs` changed it: the newest.
    func handle(_ inputs: [NetworkEngine.Input], _ now: ContinuousClock.Instant) throws -> NetworkStatus? {
        var changed: NetworkStatus?
        for input in inputs {
            changed = try engine.handle(input, now: now).status ?? changed
            try registerNewDescriptors()
        }
        return changed
    }

    /// The status, when a route it rests on expired and that changed it. A
    /// failed lookup is logged, and asked again at the next wake-up.
    func expireRoutes(_ now: ContinuousClock.Instant) -> NetworkStatus? {
        do {
            return try engine.expireRoutes(now: now)
        } catch {
            logger.error("route lookups after a route expired failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// The engine's descriptors that came since: a reopened netlink socket,
    /// or a watch on /etc for a name's resolution.
    func registerNewDescriptors() throws {
        for (input, fd) in engine.takeNewDescriptors() {
            do { try poll.add(fd, .engine(input), interest: .readable) } catch {
                // Without netlink the daemon is deaf: better stopped, and restarted.
                guard input != .netlink else { throw error }
                logger.error("cannot wait for the resolver's files; watched names resolve again only when the path changes",
                             metadata: ["error": "\(error)"])
            }
        }
    }
}
