import ArgumentParser

/// `nm-online`'s exit codes, which every command keeps: 0 online (or
/// success), 1 not online (or timed out), 2 a usage or internal error.
extension ExitCode {
    static let notOnline = ExitCode(1)
    static let internalError = ExitCode(2)
}
