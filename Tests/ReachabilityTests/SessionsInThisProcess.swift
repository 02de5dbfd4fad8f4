import Testing

/// The suites that follow the network in this process, run one after
/// another: `cancellingClosesItsNetlinkSockets` counts the netlink sockets
/// the process holds, and a session of another test (its engine, its
/// liveness sentinel) opening or closing meanwhile would be counted as the
/// monitor's.
@Suite(.serialized)
enum SessionsInThisProcess {}
