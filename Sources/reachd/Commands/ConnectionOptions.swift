import ArgumentParser
import Logging
import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// `--socket`: the one daemon to ask. Every client subcommand has it;
/// `check`, which only a daemon can answer, has nothing else.
struct SocketOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Ask the daemon at this socket, and fail (exit 2) if it doesn't answer or stops answering. Default: $REACHD_SOCKET, else the socket a daemon of this user binds, then \(SocketPath.system).",
            valueName: "path"),
        completion: .file())
    var socket: String?

    func validate() throws {
        try SocketArgument.check(socket)
    }

    /// Where to look for a daemon, in order: the one named, else the defaults.
    var socketPaths: [String] { SocketPath.forClients(orOnly: socket) }

    /// Says on stderr why no daemon gave an answer, and what to do about
    /// the last one's cause: exit 2.
    /// `inProcess`: whether the command computes in-process where no daemon
    /// answers (all but `check`); `starting`: what to add to the advice to
    /// start a daemon (`check`'s: one with the check on).
    func failed(_ failures: [DaemonClientError], inProcess: Bool = true, starting: String = "") -> ExitCode {
        Console.error("reachd: \(ReachabilityError.noDaemonAnswered(failures).description)")
        if let remedy = failures.last.flatMap({ remedy(for: $0, inProcess: inProcess, starting: starting) }) {
            Console.error("reachd: \(remedy)")
        }
        return .internalError
    }

    /// Whether something other than a socket is at `path`: connecting to
    /// a regular file is refused (ECONNREFUSED), as to a socket nobody
    /// listens on.
    static func isNotASocket(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFSOCK
    }

    /// What the user can do about why the daemon gave no answer; `nil`
    /// where the description says it already.
    func remedy(for failure: DaemonClientError, inProcess: Bool, starting: String = "") -> String? {
        let instead = socket == nil ? "" : ", or leave out --socket to ask the default daemon\(inProcess ? " or compute in-process" : "")"
        switch failure {
        case .notRunning(let path, let cause) where cause.errno == ENOTSOCK || Self.isNotASocket(path):
            return "\(path) is not a socket: name the socket a daemon listens on (`reachd daemon --socket PATH` binds one)\(instead)"
        case .notRunning(let path, _):
            return "start one with `reachd daemon\(socket == nil ? "" : " --socket \(path)")`\(starting)\(instead)"
        case .connectionFailed(_, let cause) where cause.errno == EACCES || cause.errno == EPERM:
            return "this user may not connect to that socket: ask its owner\(instead)"
        case .connectionFailed, .closed:
            return "the daemon went away (stopped or restarted): start it again\(instead)"
        case .timedOut:
            return "it runs but does not answer: see `systemctl status reachd` (or whether it was stopped with SIGSTOP)\(instead)"
        case .rejected(let code, _) where code == "too_many_clients":
            return "the daemon serves as many clients as it may: close some, or raise its --max-clients"
        case .rejected(let code, _) where code == RequestError.tooManyWatches:
            return "ask for fewer targets at once, or raise the daemon's --max-watches-per-connection"
        case .rejected, .untrustedOwner, .protocolError:
            return nil
        case .otherNetwork, .unnamedNetwork:
            // Its path is taken: a second daemon there would take it from the other network.
            return "name a daemon of this network namespace with --socket\(socket == nil || !inProcess ? "" : ", or leave out --socket to compute in-process")"
        }
    }
}

/// Options every client subcommand but `check` shares: which daemon to
/// ask, if any.
///
/// Without options a client asks the default daemons and, where none answers,
/// computes the answer in-process. `--socket` names one daemon, which then
/// must answer, first to last (as `nm-online` errs when NetworkManager
/// doesn't); `--no-daemon` asks none.
struct ConnectionOptions: ParsableArguments {
    @OptionGroup var daemon: SocketOption

    @Flag(name: .customLong("no-daemon"), help: "Ask no daemon: compute the answer in-process from netlink. Without --socket, what a client does where no daemon answers.")
    var noDaemon = false

    var socket: String? { daemon.socket }

    func validate() throws {
        if noDaemon && socket != nil {
            throw ValidationError("--socket names a daemon to ask and --no-daemon asks none; pick one.")
        }
    }

    /// Where to look for a daemon, in order; empty with `--no-daemon`.
    var socketPaths: [String] {
        noDaemon ? [] : daemon.socketPaths
    }

    /// One answer for these options: the first daemon that answers, else
    /// in-process unless the user named the daemon.
    var query: OneShotQuery { OneShotQuery(source: source, socketPaths: socketPaths) }

    /// What a ``ReachabilityMonitor`` follows for these options.
    var source: SourcePreference {
        noDaemon ? .inProcess : socket == nil ? .automatic : .daemon
    }

    /// What a command throws when no allowed source answered: the advice to
    /// start the daemon `--socket` named, or the in-process failure.
    func failure(_ error: ReachabilityError) -> any Error {
        switch error {
        case .noDaemonAnswered(let failures):
            return daemon.failed(failures)
        case .inProcessFailed, .waitFailed: return error
        }
    }

    /// Says on stderr why the answer was computed in-process, when a daemon
    /// was tried: asked for no daemon, the user needs no notice.
    func reportComputedInProcess(after failures: [DaemonClientError]) {
        guard !failures.isEmpty else { return }
        Console.error("reachd: \(failures.map(\.briefDescription).joined(separator: "; ")); computed in-process from netlink")
    }

    /// Follows on this thread: the status in `detail` (`nil`: none) and
    /// `destinations`, each one's current answer and then every change,
    /// from the daemon while one answers and in-process otherwise (as
    /// ``source`` allows), saying so on stderr when the source changes if
    /// `announcingSource`. `deliver` gets each update and returns whether to
    /// go on; `deadline` ends the wait. No tasks and no timers: a quiet
    /// network costs nothing. With `--socket`, that daemon must answer,
    /// first to last (an error the user can act on beats a silent wait, or
    /// a screen nobody keeps current), and a destination it refuses is an
    /// error.
    func follow(
        status detail: StatusDetail?, destinations: [DestinationKey] = [], announcingSource: Bool,
        until deadline: ContinuousClock.Instant? = nil, traceDatagrams: (@Sendable ([UInt8]) -> Void)? = nil,
        deliver: (FollowSession.Update) -> Bool
    ) throws {
        let configuration = FollowSession.Configuration(
            source: traceDatagrams == nil ? source : .inProcess, socketPaths: socketPaths, statusDetail: detail,
            daemonRequired: socket != nil)
        var refused: ReachabilityError?
        var followingDaemon: Bool?
        // The command says each daemon failure that is news, and each
        // change of source, once, in its own words: the session's warnings
        // would say them again, in another form. The same policy decides
        // what is news.
        var failureLog = DaemonFailureLog()
        // Since the last change of source: whether a warning said why, and
        // the failures too common to warn of (no socket, a hang-up).
        var toldWhy = false
        var quietFailures: [DaemonClientError] = []
        // Not announcing (`--quiet`), it says none of them.
        var logger = Logger(label: "reachd.monitor")
        logger.logLevel = .error
        // The session runs on this thread: the kernel's latency hint for it
        // (TimeSlice). Refused, the command follows as well, only later
        // when the cores are busy.
        TimeSlice.request()
        do {
            let session = try FollowSession(configuration, logger: logger, traceDatagrams: traceDatagrams)
            for key in destinations { session.remote.follow(key) }
            try session.run(until: deadline) { update in
                switch update {
                case .following(let source):
                    let fromDaemon = source == .daemon
                    if announcingSource, fromDaemon, followingDaemon != nil {
                        Console.error("reachd: following the daemon again")
                    }
                    if announcingSource, !fromDaemon, !noDaemon, !toldWhy {
                        let why = quietFailures.isEmpty
                            ? "no daemon answers" : quietFailures.map(\.briefDescription).joined(separator: "; ")
                        Console.error("reachd: \(why); following netlink in-process")
                    }
                    if fromDaemon { failureLog.daemonAnswered() }
                    (toldWhy, quietFailures) = (false, [])
                    followingDaemon = fromDaemon
                    return true
                case .destinationFailed(_, let error):
                    refused = error
                    return false
                case .problem(let problem):
                    guard announcingSource else { return deliver(update) }
                    switch problem {
                    case .noDaemonAnswered(let failures):
                        for failure in failures {
                            guard let entry = failureLog.entry(for: failure, source: configuration.source) else { continue }
                            if entry.level >= .warning {
                                Console.error("reachd: \(entry.message)")
                                // A watch refused beside a daemon that answers is
                                // no word on why the daemon itself went.
                                if case .rejected = failure {} else { toldWhy = true }
                            } else {
                                quietFailures.append(failure)
                            }
                        }
                    case .inProcessFailed, .waitFailed:
                        // The session says these itself, as errors; a wait
                        // that failed ends the command with its message.
                        break
                    }
                    return deliver(update)
                case .status, .destination:
                    return deliver(update)
                }
            }
        } catch {
            throw failure(error)
        }
        if let refused { throw failure(refused) }
    }
}

/// Options for output shape.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print the status as JSON, one object per line (the wire protocol: PROTOCOL.md in reachd's documentation).")
    var json = false
}
