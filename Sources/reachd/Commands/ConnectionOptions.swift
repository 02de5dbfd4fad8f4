import ArgumentParser
import Reachability

/// Options every client subcommand shares.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's socket. Default: $REACHD_SOCKET, else the socket a daemon of this user binds, then \(SocketPath.system).",
            valueName: "path"))
    var socket: String?

    /// Where to look for a daemon, in order.
    var socketPaths: [String] {
        socket.map { [$0] } ?? SocketPath.forClients()
    }
}

/// Options for output shape.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print the status as JSON, one object per line (docs/PROTOCOL.md).")
    var json = false
}
