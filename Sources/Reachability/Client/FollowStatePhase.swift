extension FollowState {
    /// Where the session stands with a daemon, or that it ended.
    enum Phase: Equatable {
        /// No daemon connection: none made yet, or the last one dropped.
        case idle
        /// Connected to the daemon `link` reads: its first status, which
        /// says it serves this network, is awaited until `firstAnswerBy`.
        case connecting(DaemonLink)
        /// The daemon answered for this network, and answers.
        case answered(DaemonLink)
        /// It answered, then not its liveness probe: in-process meanwhile,
        /// and its next word starts a fresh subscription.
        case unresponsive(DaemonLink)
        /// The session ended: no input changes it until a restart.
        case ended

        /// The daemon connection being followed or tried.
        var link: DaemonLink? {
            switch self {
            case .connecting(let link), .answered(let link), .unresponsive(let link): link
            case .idle, .ended: nil
            }
        }

        /// Whether there is a ``link``, without copying it out: asked for
        /// each line and event the daemon sends.
        var hasLink: Bool {
            switch self {
            case .connecting, .answered, .unresponsive: true
            case .idle, .ended: false
            }
        }

        /// When the link's first answer is due, without copying the link
        /// out: asked at every turn of the loop.
        var firstAnswerBy: ContinuousClock.Instant? {
            switch self {
            case .connecting(let link), .answered(let link), .unresponsive(let link): link.firstAnswerBy
            case .idle, .ended: nil
            }
        }

        var hasEnded: Bool { if case .ended = self { true } else { false } }

        /// Whether the daemon has answered, responsive or not since (its
        /// liveness is then watched).
        var daemonHasAnswered: Bool {
            switch self {
            case .answered, .unresponsive: true
            case .idle, .connecting, .ended: false
            }
        }

        /// Whether the daemon answers now: it has, and has not stopped
        /// answering since.
        var daemonAnswers: Bool { if case .answered = self { true } else { false } }

        /// Holds `link` as it is after a read: answered once it says so.
        mutating func holdRead(_ link: DaemonLink) {
            switch self {
            case .connecting, .answered: self = link.hasAnswered ? .answered(link) : .connecting(link)
            case .unresponsive: self = .unresponsive(link)
            case .idle, .ended: break
            }
        }
    }
}
