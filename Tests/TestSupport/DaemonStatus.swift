import Reachability

/// The status the daemon at `path` gives one `get`, within a second: what a
/// test asks to see that a daemon runs and what it says.
package func daemonStatus(at path: String) throws(ReachabilityError) -> NetworkStatus {
    try OneShotQuery(source: .daemon, socketPaths: [path]).status().value
}
