import ArgumentParser
import Reachability

/// `--socket`'s value, of a client or of the daemon: a path, never empty,
/// which the kernel would answer with "File name too long".
enum SocketArgument {
    static func check(_ socket: String?) throws {
        if socket?.isEmpty == true {
            throw ValidationError("--socket needs a path, as in --socket \(SocketPath.system); leave it out for the default.")
        }
    }
}
