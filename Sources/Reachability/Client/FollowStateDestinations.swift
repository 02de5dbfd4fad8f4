/// ``FollowState``'s decisions about followed destinations: what the
/// daemon is asked to watch, what it refused, and each answer delivered
/// unless it repeats the last.
extension FollowState {
    mutating func carryOut(_ commands: [FollowSession.Remote.Command]) {
        for command in commands where !phase.hasEnded {
            switch command {
            case .stop: end(nil)
            case .follow(let key): follow(key)
            case .unfollow(let key): unfollow(key)
            }
        }
    }

    mutating func follow(_ key: DestinationKey) {
        guard let id = followed.add(key) else { return }
        if phase.hasLink { effects.append(.send([watch(key, id: id)])) }
        holdInProcess()
    }

    mutating func unfollow(_ key: DestinationKey) {
        guard let entry = followed.remove(key) else { return }
        effects.append(.dropInProcess(key))
        // What the daemon refused, it does not hold.
        if entry.daemonHolds, phase.hasLink { effects.append(.send([ClientRequest(.unwatch, id: entry.wireID)])) }
        // An engine kept for what the daemon refused goes with the last of it.
        if phase.daemonAnswers, !followed.anyRefusedByDaemon { stopEngine() }
    }

    func watch(_ key: DestinationKey, id: String) -> ClientRequest {
        ClientRequest(.watch, destination: key.destination, id: id, family: key.family)
    }

    /// Delivers a destination's answer unless it repeats the last one.
    mutating func forward(_ key: DestinationKey, _ status: DestinationStatus, line: [UInt8]?) {
        if followed.deliver(status, for: key) { updates.append(.destination(key, status, line: line)) }
    }

    /// The daemon refused to watch `key` (over its limits, say): in-process
    /// from then on where the source allows, else no more.
    mutating func watchRefused(_ key: DestinationKey, _ error: DaemonClientError) {
        reportFailure(error)
        switch configuration.source {
        case .automatic, .inProcess:
            followed.refusedByDaemon(key)
            startEngine()
        case .daemon:
            _ = followed.remove(key)
            updates.append(.destinationFailed(key, .noDaemonAnswered([error])))
        }
    }

    mutating func refused(_ error: DaemonClientError, code: String, id: String?, _ now: ContinuousClock.Instant) {
        guard let id, let key = followed.key(wireID: id) else {
            // About a destination unfollowed meanwhile (its unwatch, a
            // refusal already on its way): nothing is asked of it now.
            if let id, followed.wasIssued(id) { return }
            return daemonFailed(error, now)
        }
        switch code {
        case RequestError.tooManyWatches, RequestError.badDestination, RequestError.duplicateID:
            // Refused: the daemon holds no watch for it.
            watchRefused(key, error)
        default:
            // lookup_failed, or what a newer daemon says about it: the watch
            // is held, and the daemon's next evaluation answers it.
            reportFailure(error)
        }
    }
}
