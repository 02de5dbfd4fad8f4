internal import CNetlink

/// A failure of a netlink operation, as libnl names it.
///
/// libnl reports errors as negative `NLE_*` codes; system call failures are
/// mapped into the same space with `nl_syserr2nlerr`, so there is one error type
/// and one source of messages (`nl_geterror`).
public struct NetlinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What reachd was doing, e.g. "connect to rtnetlink".
    public let operation: String
    /// libnl's positive `NLE_*` code.
    let code: Int32

    init(_ operation: String, libnlCode: Int32) {
        self.operation = operation
        self.code = abs(libnlCode)
    }

    init(_ operation: String, errno: Int32) {
        self.init(operation, libnlCode: nl_syserr2nlerr(errno))
    }

    public var description: String {
        "netlink: \(operation) failed: \(String(cString: nl_geterror(code)))"
    }
}

/// Runs a libnl call that returns a negative `NLE_*` code on failure.
@discardableResult
func libnl(_ operation: @autoclosure () -> String, _ result: Int32) throws(NetlinkError) -> Int32 {
    guard result >= 0 else { throw NetlinkError(operation(), libnlCode: result) }
    return result
}
