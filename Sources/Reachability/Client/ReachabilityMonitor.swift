import Logging
import Synchronization

/// Follows the host's network from a Swift program: the current status, an
/// async sequence of changes, and callbacks for code that is not async; and,
/// the same ways, whether the app's own servers are reachable.
///
/// ```swift
/// let monitor = ReachabilityMonitor()                  // .automatic
/// for try await status in monitor.statuses() {         // the current status first
///     print(status.online ? "online" : "offline", "from the", status.source)
/// }
///
/// let subscription = monitor.onChange { status in updateBanner(status.online) }
/// subscription.cancel()
/// ```
///
/// A monitor is one session with the network, on one thread of its own:
/// one connection to the daemon carries the status and every destination
/// followed, and while no daemon answers, one in-process engine computes
/// them all. Following a destination more costs a watch on that
/// connection, not a thread or a socket. Cancelling the monitor, or
/// letting the last reference go, closes its sockets and ends its thread.
public final class ReachabilityMonitor: Sendable {
    /// How long to wait between attempts to reach the daemon: ``Reachability/Backoff``,
    /// a type of its own since 0.14; this name stays for code written before.
    public typealias Backoff = Reachability.Backoff
    /// Where the monitor takes its statuses from: ``SourcePreference``, a type
    /// of its own since 0.14, as the one-shot questions and the command take
    /// it too; this name stays for code written before.
    public typealias Source = SourcePreference

    /// How long a daemon may take to accept a connection and answer, for
    /// every one-shot question: a healthy daemon answers in well under a
    /// millisecond.
    public static let defaultTimeout: Duration = DaemonConnection.answerTimeout

    /// Where this monitor takes its statuses from.
    public let source: SourcePreference
    private let hub: MonitorHub
    /// Tells the session's thread what to follow, and when to end.
    private let remote: FollowSession.Remote?
    /// Carries ``reportFailure()`` to the daemon.
    private let reporter: FailureReporter

    /// Starts following the network at once; the first status arrives within
    /// milliseconds (``firstStatus()``).
    ///
    /// - Parameters:
    ///   - source: the daemon, in-process netlink, or the daemon when it
    ///     answers and netlink meanwhile (the default).
    ///   - socketPath: the daemon's socket; by default `$REACHD_SOCKET`, then this
    ///     user's and the system daemon's paths (``SocketPath/forClients(environment:isRoot:)``).
    ///   - detail: `.summary` (the default) delivers statuses without the
    ///     interface list, and only when whether and how the host is online
    ///     changed: a container's veth appearing wakes nobody. `.full` fills
    ///     ``NetworkStatus/interfaces`` and delivers every change of it too.
    ///   - backoff: how long to wait between attempts to reach the daemon.
    ///   - logger: where failures to reach the daemon are logged, once each.
    public init(
        source: SourcePreference = .automatic, socketPath: String? = nil, detail: StatusDetail = .summary,
        backoff: Backoff = Backoff(),
        logger: Logger = Logger(label: "reachd.monitor")
    ) {
        self.source = source
        let configuration = FollowSession.Configuration(
            source: source, socketPaths: SocketPath.forClients(orOnly: socketPath), statusDetail: detail,
            backoff: backoff)
        let query = OneShotQuery(source: source, socketPaths: configuration.socketPaths)
        reporter = FailureReporter { query.requestCheck() }
        let remote: FollowSession.Remote
        do {
            remote = try FollowSession.Remote()
        } catch {
            self.remote = nil
            hub = MonitorHub(remote: nil)
            hub.finish(throwing: .waitFailed(error))
            return
        }
        self.remote = remote
        let hub = MonitorHub(remote: remote)
        self.hub = hub
        // A thread, not a task: it sleeps in poll, and an answer reaches the
        // listeners straight from the socket that brought it.
        startDetachedThread {
            let session = FollowSession(configuration, remote: remote, logger: logger)
            do throws(ReachabilityError) {
                try session.run { update in hub.take(update) }
                hub.finish(throwing: nil)
            } catch {
                hub.finish(throwing: error)
            }
        }
    }

    deinit {
        cancel()
    }

    /// Tells the daemon that this app's requests fail although the status
    /// says online: a server that stopped answering, a resolver that did.
    /// The daemon runs its connectivity check at once (within 5 s of its
    /// last probe), so that a dead path or failing names are published in
    /// seconds rather than at the next scheduled probe, 300 s away while all
    /// seemed well. Returns at once; call it on every such failure: reports
    /// within a second of each other become one, and the daemon probes each
    /// family at most once per 5 s whoever asks. Without a daemon (or with
    /// ``SourcePreference/inProcess``) there is no check, and it does nothing.
    /// The placeholder controller of ReachabilityPlaceholders calls it for you.
    ///
    /// ```swift
    /// let monitor = ReachabilityMonitor()
    /// if let status = monitor.currentStatus, status.online {
    ///     monitor.reportFailure()   // the app's request failed on the network anyway
    /// }
    /// ```
    public func reportFailure() {
        guard source != .inProcess else { return }
        reporter.report()
    }

    /// Asks once, without following: the current status from the first
    /// daemon that answers, else (where `source` allows) computed in-process
    /// from one netlink snapshot, with ``NetworkStatus/source`` saying which.
    ///
    /// ```swift
    /// let now = try await ReachabilityMonitor.currentStatus()
    /// print(now.online ? "online" : "offline", "according to the", now.source)
    /// ```
    ///
    /// - Parameters:
    ///   - source: `.automatic` (the default) falls back in-process; `.daemon`
    ///     throws when no daemon answers; `.inProcess` asks none.
    ///   - socketPath: the daemon's socket; by default the paths
    ///     ``SocketPath/forClients(environment:isRoot:)`` lists, in turn.
    ///   - detail: `.full` (the default) includes the interface list: one
    ///     answer costs the same either way, and only a monitor that follows
    ///     changes is woken less by `.summary`.
    ///   - timeout: shared by the daemons tried: a stopped one costs at most this.
    /// - Throws: ``ReachabilityError`` when no allowed source answers.
    public static func currentStatus(
        source: SourcePreference = .automatic, socketPath: String? = nil, detail: StatusDetail = .full,
        timeout: Duration = defaultTimeout
    ) async throws(ReachabilityError) -> NetworkStatus {
        let query = OneShotQuery(source: source, socketPaths: SocketPath.forClients(orOnly: socketPath))
        return try await answer { () throws(ReachabilityError) in try query.status(detail: detail, timeout: timeout).value }
    }

    /// Asks once whether `destination` is reachable, as the kernel would route
    /// this app's packets to it: from the first daemon that answers (its
    /// lookup made as this process's uid), else (where `source` allows) from
    /// this process's own netlink lookups. A name is answered once resolved.
    ///
    /// ```swift
    /// let api = try Destination(parsing: "api.example.com")
    /// let answer = try await ReachabilityMonitor.reachability(of: api)
    /// print(answer.isReachable ? "reachable via \(answer.via!.interface)" : "unreachable")
    /// ```
    ///
    /// - Parameters:
    ///   - destination: the app's server: a host name or an address, and a port.
    ///   - family: only this family's addresses; `nil` (the default): both.
    ///   - source: `.automatic` (the default) falls back in-process; `.daemon`
    ///     throws when no daemon answers; `.inProcess` asks none.
    ///   - socketPath: the daemon's socket; by default the paths
    ///     ``SocketPath/forClients(environment:isRoot:)`` lists, in turn.
    ///   - timeout: shared by the daemons tried, for reaching one; a name
    ///     may take the resolver's timeout (5 s) on top.
    /// - Throws: ``ReachabilityError`` when no allowed source answers, or the
    ///   daemon refused the request.
    public static func reachability(
        of destination: Destination, family: AddressFamily? = nil, source: SourcePreference = .automatic,
        socketPath: String? = nil, timeout: Duration = defaultTimeout
    ) async throws(ReachabilityError) -> DestinationStatus {
        let query = OneShotQuery(source: source, socketPaths: SocketPath.forClients(orOnly: socketPath))
        return try await answer { () throws(ReachabilityError) in
            try query.destinations([destination], family: family, timeout: timeout).value[0]
        }
    }

    /// Runs a blocking question on a thread of its own, not on one of the
    /// runtime's few cooperative threads.
    private static func answer<Value: Sendable>(
        _ question: @escaping @Sendable () throws(ReachabilityError) -> Value
    ) async throws(ReachabilityError) -> Value {
        let result: Result<Value, ReachabilityError> = await withCheckedContinuation { continuation in
            startDetachedThread { continuation.resume(returning: Result(catching: question)) }
        }
        return try result.get()
    }

    /// The newest status, or `nil` before the first arrives: right after
    /// `init` it is `nil` for the few milliseconds the first answer takes.
    /// ``firstStatus()`` waits for it.
    public var currentStatus: NetworkStatus? { hub.current }

    /// The current status, waiting for the first one if none has arrived yet.
    ///
    /// ```swift
    /// let monitor = ReachabilityMonitor()
    /// let now = try await monitor.firstStatus()
    /// print(now.online ? "online" : "offline")
    /// ```
    ///
    /// Throws `CancellationError` when the monitor is cancelled first, or what
    /// ended it (a `.daemon` monitor's protocol mismatch).
    public func firstStatus() async throws -> NetworkStatus {
        for try await status in statuses() { return status }
        throw CancellationError()
    }

    /// The last problem met while following the network (the daemon went away,
    /// speaks another protocol version, netlink failed), or `nil`.
    public var lastError: ReachabilityError? { hub.lastError }

    /// The current status (once known, with no ``NetworkStatus/changes``),
    /// then one per change. Ends when the monitor is cancelled; throws a
    /// ``ReachabilityError`` when it cannot go on (a `.daemon` monitor whose
    /// daemon speaks another protocol version).
    ///
    /// A reader slower than the network is given the newest status and
    /// misses the ones before it, with what they said changed: to act on
    /// every handover, read ``pathChanges()``.
    public func statuses() -> AsyncThrowingStream<NetworkStatus, any Error> {
        hub.stream(.status, bufferingNewest: 1) { if let status = $0.status { $1.yield(status) } }
    }

    /// Every change of a family's path, from now on: a VPN taking the
    /// default route or leaving it, another uplink becoming preferred, a new
    /// gateway or source address, the family going offline or coming back.
    /// One element per family per published status that moved its path;
    /// none for anything else, however much the host's links and routes
    /// churn. The connections a program opened on the old path may be
    /// dead, even though the host is online throughout: reconnect.
    ///
    /// Up to 16 changes wait for a slow reader; beyond that the oldest go.
    /// Ends as ``statuses()`` does.
    ///
    /// ```swift
    /// let monitor = ReachabilityMonitor()
    /// for try await change in monitor.pathChanges() {
    ///     print("\(change.family) path: \(change.from?.interface ?? "none") → \(change.to?.interface ?? "none")")
    ///     // socket.reconnect()
    /// }
    /// ```
    public func pathChanges() -> AsyncThrowingStream<PathChange, any Error> {
        hub.stream(.status, bufferingNewest: 16) { for change in $0.status?.pathChanges ?? [] { $1.yield(change) } }
    }

    /// Calls `handler` with the current status (once known) and every change,
    /// in order, until the returned subscription is cancelled. The handler runs
    /// on the monitor's own thread, straight from the socket that brought the
    /// status, and involves no tasks: a program that only uses callbacks (a
    /// GLib main loop, a server's own loop) makes no system calls while the
    /// network is quiet. For UI code use ``onChange(onMainActor:)``.
    @discardableResult
    public func onChange(_ handler: @escaping @Sendable (NetworkStatus) -> Void) -> Subscription {
        hub.handler(.status) { if let status = $0.status { handler(status) } }
    }

    /// Like ``onChange(_:)``, with `handler` called on the main actor, as
    /// NWPathMonitor's `start(queue: .main)` would.
    ///
    /// ```swift
    /// let subscription = monitor.onChange(onMainActor: { status in
    ///     updateBanner(status.online)      // main-actor UI code
    /// })
    /// ```
    @discardableResult
    public func onChange(onMainActor handler: @escaping @MainActor @Sendable (NetworkStatus) -> Void) -> Subscription {
        let stream = statuses()
        // The stream's end, or its error (``lastError`` keeps it), ends the calls.
        let task = Task { @MainActor in for try await status in stream { handler(status) } }
        return Subscription { task.cancel() }
    }

    /// Whether `destination` is reachable, from this monitor's source: its
    /// answer first, then one per change of its state, reason, path or
    /// addresses. Routing changes that leave the answer alone deliver
    /// nothing. Ends when the monitor is cancelled or the sequence is
    /// dropped; throws a ``ReachabilityError`` when a `.daemon` monitor's
    /// daemon refuses to watch it (over its limits).
    ///
    /// An `.automatic` monitor answers in-process while no daemon does and
    /// goes back to the daemon once it answers again (the answer's
    /// ``DestinationStatus/source`` says which); a name the new source has
    /// yet to resolve keeps its last answer rather than turning `pending`.
    /// Any number of destinations share the monitor's one connection.
    ///
    /// ```swift
    /// let monitor = ReachabilityMonitor()
    /// let api = try Destination(parsing: "api.example.com:443")
    /// for try await answer in monitor.reachability(of: api) {
    ///     print(answer.target, answer.state, answer.via?.interface ?? "-")
    /// }
    /// ```
    public func reachability(
        of destination: Destination, family: AddressFamily? = nil
    ) -> AsyncThrowingStream<DestinationStatus, any Error> {
        hub.stream(.destination(DestinationKey(destination, uid: nil, family: family)), bufferingNewest: 1) {
            if let status = $0.destinationStatus { $1.yield(status) }
        }
    }

    /// Calls `handler` with `destination`'s answer and every change of it,
    /// in order, until the subscription or the monitor is cancelled, or a
    /// `.daemon` monitor's daemon refuses to watch it (``lastError`` then
    /// says why). The handler runs on the monitor's own thread, straight
    /// from the socket that brought the answer; no tasks are involved.
    ///
    /// ```swift
    /// let intranet = try Destination(parsing: "wiki.corp.example")
    /// let subscription = monitor.onChange(of: intranet) { answer in
    ///     print(answer.isReachable ? "wiki reachable" : "wiki unreachable")
    /// }
    /// subscription.cancel()
    /// ```
    @discardableResult
    public func onChange(
        of destination: Destination, family: AddressFamily? = nil,
        _ handler: @escaping @Sendable (DestinationStatus) -> Void
    ) -> Subscription {
        hub.handler(.destination(DestinationKey(destination, uid: nil, family: family))) {
            if let status = $0.destinationStatus { handler(status) }
        }
    }

    /// Stops following the network: closes the sockets, ends the monitor's
    /// thread, ends every sequence.
    public func cancel() {
        remote?.stop()
        hub.finish(throwing: nil)
    }

    /// A callback registration; cancelling it stops the calls.
    public struct Subscription: Sendable {
        let stop: @Sendable () -> Void

        /// Stops the calls; a call under way finishes.
        public func cancel() { stop() }
    }
}
