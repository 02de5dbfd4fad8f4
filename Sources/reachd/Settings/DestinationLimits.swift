/// How many destinations clients may watch: each watch costs the daemon a
/// route lookup per address after every batch of routing changes.
struct DestinationLimits: Equatable {
    /// As many as a user may hold: a client library follows all of a
    /// process's destinations on one connection, so one connection is what
    /// an app with many servers needs; the user's limit bounds the cost.
    static let defaultPerConnection = defaultPerUser
    static let defaultPerUser = 128
    static let defaultTotal = 1024

    /// Watches and unanswered `reach` requests one connection may hold.
    var perConnection = defaultPerConnection
    /// Watches and unanswered `reach` requests one user may hold over all
    /// their connections: what bounds the names they queue at the
    /// resolver. Root counts too: a watch costs the same whoever holds it.
    var perUser = defaultPerUser
    /// Watches the daemon holds in all.
    var total = defaultTotal

    /// Why one more watch on `connection` (holding `connectionCount`) by a
    /// user holding `userCount`, with `totalCount` held in all, is refused:
    /// the limit and the flag that sets it.
    func refusal(connectionCount: Int, userCount: Int, totalCount: Int) -> String? {
        if connectionCount >= perConnection {
            return "this connection holds \(perConnection) watches and answers to come, "
                + "the most one connection may (--max-watches-per-connection); unwatch one first"
        }
        if userCount >= perUser {
            return "this user holds \(perUser) watches and answers to come, the most one user may (--max-watches-per-user); "
                + "unwatch one, or wait for an answer, first"
        }
        if totalCount >= total {
            return "the daemon holds \(total) watches, the most it takes (--max-watches); try again later"
        }
        return nil
    }
}
