import Logging

/// What goes into a ``FollowState`` (what the session's loop read, or what
/// an effect came to) and what comes out for the loop to perform: the
/// reducer's whole vocabulary, apart from its decisions.
extension FollowState {
    enum Input: Equatable {
        /// What other threads asked, through the session's ``FollowSession/Remote``.
        case commands([FollowSession.Remote.Command])
        /// Time passed: a retry or a first answer may be due.
        case tick
        /// `.connect` reached the daemon at `path`, and sent the requests,
        /// from `ownNetwork`, the namespace the connection was made in
        /// (``DaemonConnection/ownNetwork``): its first status must describe it.
        case connected(path: String, ownNetwork: NetworkNamespace?)
        /// `.connect` to `path` failed.
        case connectFailed(path: String, DaemonClientError)
        /// The daemon's connection is readable.
        case daemonReadable
        /// `.readDaemon` found these complete lines, in order.
        case daemonLines([[UInt8]])
        /// What `.decode` made of a status passed on undecoded, and the lines
        /// read after it.
        case decoded(Result<NetworkStatus, DaemonClientError>, then: [[UInt8]])
        /// `.decode` left a status passed on as it came: its reader did not
        /// decode it, and no line after it waits. Kept undecoded until a
        /// later status is compared with it.
        case passedUndecoded(StatusUpdate)
        /// Reading from or sending to the daemon failed, or it closed.
        case daemonFailed(DaemonClientError)
        /// What ``DaemonLiveness`` says about the daemon followed.
        case liveness(DaemonLiveness.Verdict)
        /// `.startEngine` left the engine running; its status so far.
        case engineStarted(lastStatus: NetworkStatus?)
        /// Netlink failed in-process: starting the engine, or while it ran.
        case engineFailed(NetlinkError)
        /// What the in-process engine computed.
        case computed([InProcessFollower.Event])
        /// Something happened where a daemon's socket would appear
        /// (`.watchSockets`): try the daemons again. The watch is gone.
        case socketsChanged
        /// `.watchSockets` could not watch: back to the retry schedule.
        case socketsUnwatchable
    }

    enum Effect: Equatable {
        /// Connect to the daemon at `path` and send `requests`; `.connected`
        /// or `.connectFailed` says how it went.
        case connect(path: String, requests: [ClientRequest])
        /// Send on the daemon's connection; `.daemonFailed` if that fails.
        case send([ClientRequest])
        /// Read what the daemon sent: `.daemonLines` or `.daemonFailed`.
        case readDaemon
        /// A status line already delivered as it came: what its reader's
        /// decoding found, or, where lines after it wait (they are compared
        /// with it), its decoding, then those lines: `.decoded`. Where neither
        /// (a reader printing the daemon's bytes), `.passedUndecoded`.
        /// Decoding was two thirds of a following client's time per status
        /// (JSONDecoder, about 0.2 ms), so the line reaches its reader first,
        /// and is decoded only where something needs what it says.
        case decode(StatusUpdate, then: [[UInt8]])
        /// Close the daemon's connection and forget its liveness probe.
        case dropDaemon
        /// Start the in-process engine unless it runs: `.engineStarted` or `.engineFailed`.
        case startEngine
        case stopEngine
        /// Make the engine hold exactly these destinations: `.computed` with
        /// the answers of those it starts holding, or `.engineFailed`.
        case holdInProcess([DestinationKey])
        /// The engine stops holding `key`, now unfollowed.
        case dropInProcess(DestinationKey)
        case log(Logger.Level, String, Logger.Metadata)
        /// Watch the directories where the daemons' sockets at `paths`
        /// would appear: `.socketsChanged` when one may have, or
        /// `.socketsUnwatchable`.
        case watchSockets([String])
        case unwatchSockets
        /// The session ends, with `error` to throw if any.
        case end(ReachabilityError?)
    }
}
