extension FollowSession {
    /// What a session follows, and where from.
    package struct Configuration: Sendable, Equatable {
        package var source: SourcePreference
        /// Daemon sockets to try, in order.
        package var socketPaths: [String]
        /// How much of each status to deliver: with `.summary`, statuses
        /// without the interface list, and only when the summary changed.
        /// `nil`: no statuses, only destinations.
        package var statusDetail: StatusDetail?
        package var backoff = Backoff()
        /// Throw a daemon's failure rather than retry: before its first
        /// answer, and when it goes away or stops answering later. What a
        /// socket the user named needs: the command says so and exits,
        /// rather than show a status nobody keeps current.
        package var daemonRequired = false
        /// Retry netlink in-process when it fails; `false` throws the
        /// failure instead: what one answer, which cannot wait, needs.
        package var retryingInProcess = true

        package init(
            source: SourcePreference, socketPaths: [String], statusDetail: StatusDetail?,
            backoff: Backoff = .init(), daemonRequired: Bool = false
        ) {
            self.source = source
            self.socketPaths = socketPaths
            self.statusDetail = statusDetail
            self.backoff = backoff
            self.daemonRequired = daemonRequired
        }
    }
}
