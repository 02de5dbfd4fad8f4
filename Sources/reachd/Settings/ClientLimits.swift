/// How many clients the daemon serves and how much of it each may take, so
/// that no local user can exhaust its descriptors, lock other users out or
/// hold a connection that does nothing.
struct ClientLimits: Equatable {
    /// Descriptors kept back from clients, for everything else the daemon
    /// may hold at once, so that a full house of clients never leaves a
    /// scrape, a probe, a name's lookup or the textfile without one:
    /// - its own, about 22 at rest: stdio, the event poll, two netlink
    ///   sockets, the /etc watch, the wake pipes (stop, checker, resolver),
    ///   both listeners and their spare descriptors, systemd's notify socket
    ///   and the journal's; 24, and 4 more for whatever the runtime opens;
    /// - the scrapers (``MetricsSettings/maxScrapers``);
    /// - a connectivity probe per family: its TCP socket, and what its name's
    ///   lookup opens (the resolver's socket, /etc/hosts): 3 each;
    /// - the names watched destinations resolve, four at once, 3 each;
    /// - the textfile: its directory and the temporary file.
    static let reservedDescriptors = (24 + 4) + MetricsSettings.maxScrapers + 2 * 3 + 4 * 3 + 2
    /// The default cap never goes above this, however high the descriptor
    /// limit: each client holds a descriptor and up to two status lines.
    static let defaultCeiling = 16384
    static let defaultPerUser = 64
    static let defaultIdleTimeout: Duration = .seconds(10)

    /// Clients served at once; one more is answered `too_many_clients` and closed.
    var maxClients: Int
    /// Connections one user may hold. Root is not counted against it: it
    /// starts the daemon and runs `wait-online` at boot.
    var maxClientsPerUser: Int
    /// A client that has not subscribed and moves no bytes for this long is closed.
    var idleTimeout: Duration
    /// Requests served per client per wake-up, so one client's pipelined flood
    /// waits its turn behind everyone else.
    var requestsPerWakeup = 8

    /// The limits for a process allowed `descriptorLimit` open files. Without
    /// explicit values: the limit less ``reservedDescriptors`` (at most
    /// ``defaultCeiling``) clients, and ``defaultPerUser`` per user or a quarter
    /// of the clients when that is less, so four users can never fill it.
    init(
        descriptorLimit: Int, maxClients: Int? = nil, maxClientsPerUser: Int? = nil,
        idleTimeout: Duration = defaultIdleTimeout
    ) throws(ClientLimitsError) {
        let available = descriptorLimit - Self.reservedDescriptors
        guard available >= 1 else { throw .descriptorLimitTooLow(limit: descriptorLimit) }
        if let maxClients, maxClients > available {
            throw .tooManyClientsForLimit(requested: maxClients, limit: descriptorLimit)
        }
        self.maxClients = maxClients ?? min(available, Self.defaultCeiling)
        self.maxClientsPerUser = maxClientsPerUser ?? max(1, min(Self.defaultPerUser, self.maxClients / 4))
        self.idleTimeout = idleTimeout
    }

    /// Why a new connection from `user` cannot be served, or `nil` when it can.
    func refusal(clients: Int, userClients: Int, user: UInt32) -> String? {
        if clients >= maxClients {
            return "the daemon serves at most \(maxClients) clients at once (--max-clients); try again later"
        }
        if user != 0, userClients >= maxClientsPerUser {
            return "user \(user) already has \(userClients) connections to the daemon, the most one user may hold "
                + "(--max-clients-per-user); close some and try again"
        }
        return nil
    }
}

/// Limits the daemon cannot start with.
enum ClientLimitsError: Error, CustomStringConvertible {
    case descriptorLimitTooLow(limit: Int)
    case tooManyClientsForLimit(requested: Int, limit: Int)

    var description: String {
        switch self {
        case .descriptorLimitTooLow(let limit):
            "the descriptor limit (\(limit)) leaves no room for clients; the daemon needs more than "
                + "\(ClientLimits.reservedDescriptors): raise it (LimitNOFILE=, ulimit -n)"
        case .tooManyClientsForLimit(let requested, let limit):
            "--max-clients \(requested) needs \(requested + ClientLimits.reservedDescriptors) descriptors but the "
                + "limit is \(limit); lower --max-clients or raise the limit (LimitNOFILE=, ulimit -n)"
        }
    }
}
