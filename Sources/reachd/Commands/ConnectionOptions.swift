import ArgumentParser
import Logging
import Reachability

/// Options every client subcommand shares: which daemon to ask, if any.
///
/// Without options a client asks the default daemons and, where none answers,
/// computes the answer in-process. `--socket` names one daemon, which then
/// must answer (as `nm-online` errs when NetworkManager doesn't); `--no-daemon`
/// asks none.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Ask the daemon at this socket, and fail (exit 2) if it doesn't answer. Default: $REACHD_SOCKET, else the socket a daemon of this user binds, then \(SocketPath.system), else compute in-process.",
            valueName: "path"),
        completion: .file())
    var socket: String?

    @Flag(name: .customLong("no-daemon"), help: "Ask no daemon: compute the answer in-process from netlink.")
    var noDaemon = false

    func validate() throws {
        if noDaemon && socket != nil {
            throw ValidationError("--socket names a daemon to ask and --no-daemon asks none; pick one.")
        }
    }

    /// Where to look for a daemon, in order; empty with `--no-daemon`.
    var socketPaths: [String] {
        noDaemon ? [] : SocketPath.forClients(orOnly: socket)
    }

    /// One answer for these options: the first daemon that answers, else
    /// in-process unless the user named the daemon.
    var query: StatusQuery { StatusQuery(source: source, socketPaths: socketPaths) }

    /// Answers about destinations for these options, `family`'s addresses only when given.
    func destinationQuery(family: AddressFamily?) -> DestinationQuery {
        DestinationQuery(source: source, socketPaths: socketPaths, family: family)
    }

    /// What a ``ReachabilityMonitor`` follows for these options.
    var source: ReachabilityMonitor.Source {
        noDaemon ? .embedded : socket == nil ? .automatic : .daemon
    }

    /// Says on stderr that the daemon `--socket` named didn't answer, and what to do.
    func namedDaemonFailed(_ failure: String) -> ExitCode {
        Console.error("reachd: \(failure)")
        Console.error("reachd: start one with `reachd daemon --socket \(socket ?? "PATH")`, or leave out --socket to ask the default daemon or compute in-process")
        return .internalError
    }

    /// What a command throws when no allowed source answered: the advice to
    /// start the daemon `--socket` named, or the in-process failure.
    func failure(_ error: StatusQueryError) -> any Error {
        switch error {
        case .noDaemonAnswered: namedDaemonFailed(error.description)
        case .inProcessFailed: error
        }
    }

    /// Says on stderr why the answer was computed in-process, when a daemon
    /// was tried: asked for no daemon, the user needs no notice.
    func reportComputedInProcess(after failures: [DaemonClientError]) {
        guard !failures.isEmpty else { return }
        Console.error("reachd: \(failures.map(\.briefDescription).joined(separator: "; ")); computed in-process from netlink")
    }

    /// Says on stderr that what is printed now comes from another source:
    /// computed in-process when no daemon answers (unless --no-daemon asked
    /// for that), or from the daemon again.
    func announceSource(fromDaemon: Bool, after previous: Bool?) {
        guard fromDaemon != previous else { return }
        if fromDaemon, previous != nil { Console.error("reachd: following the daemon again") }
        if !fromDaemon, !noDaemon { Console.error("reachd: no daemon answers; following netlink in-process") }
    }

    /// Follows the network on this thread: the current status, then every
    /// change, from the daemon while one answers and in-process otherwise (as
    /// ``source`` allows), saying so on stderr when the source changes if
    /// `announcingSource`. `detail` says whether a change of the interface
    /// list alone is delivered (`.full`) or not. `deliver` gets each status
    /// and returns whether to go on; `deadline` ends the wait. No tasks and no
    /// timers: a quiet network costs nothing. With `--socket`, that daemon must answer first: an error
    /// the user can act on beats a silent wait.
    func follow(
        detail: StatusDetail, announcingSource: Bool, until deadline: ContinuousClock.Instant? = nil,
        traceDatagrams: ((([UInt8]) -> Void))? = nil,
        deliver: (StatusUpdate) -> Bool
    ) throws {
        let follower = StatusFollower(
            source: traceDatagrams == nil ? source : .embedded, socketPaths: socketPaths, detail: detail,
            logger: Logger(label: "reachd.monitor"), traceDatagrams: traceDatagrams, requiringAnswer: socket != nil)
        var followingDaemon: Bool?
        do {
            try follower.run(until: deadline) { update in
                // A daemon's line is a daemon's status: no decoding needed to say so.
                let fromDaemon = update.line != nil
                if announcingSource { announceSource(fromDaemon: fromDaemon, after: followingDaemon) }
                followingDaemon = fromDaemon
                return deliver(update)
            }
        } catch let error as DaemonClientError {
            // Only a named daemon ends a follower: one that doesn't answer, or
            // speaks another protocol version.
            throw namedDaemonFailed(error.briefDescription)
        }
    }
}

/// Options for output shape.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print the status as JSON, one object per line (the wire protocol: PROTOCOL.md in reachd's documentation).")
    var json = false
}
