import Synchronization

extension FollowSession {
    /// What any thread may ask of a running session; it wakes the session.
    package final class Remote: Sendable {
        enum Command: Equatable {
            case follow(DestinationKey)
            case unfollow(DestinationKey)
            case stop
        }

        let wake: WakeSignal
        private let commands = Mutex<[Command]>([])

        package init() throws(SystemError) {
            wake = try WakeSignal()
        }

        /// Starts following `key`: its answer, then one per change.
        package func follow(_ key: DestinationKey) { send(.follow(key)) }
        /// Stops following `key`: nothing more is delivered for it.
        package func unfollow(_ key: DestinationKey) { send(.unfollow(key)) }
        /// Ends ``FollowSession/run(until:deliver:)``.
        package func stop() { send(.stop) }

        private func send(_ command: Command) {
            commands.withLock { $0.append(command) }
            wake.signal()
        }

        func takeCommands() -> [Command] {
            commands.withLock { commands in
                defer { commands.removeAll() }
                return commands
            }
        }
    }
}
