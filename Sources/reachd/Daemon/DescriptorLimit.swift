import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's open-file limit. Services start with a soft limit of 1024 and
/// a far higher hard one; a process may raise its own soft limit to the hard
/// one, and must, or it runs out of descriptors long before its client cap.
enum DescriptorLimit {
    /// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the soft limit
    /// in force afterwards, and why raising it failed if it did (a seccomp
    /// filter forbidding `setrlimit`, say: the unit then sets `LimitNOFILE=`).
    static func raiseToHardLimit() -> (limit: Int, failure: SystemError?) {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return (1024, SystemError("getrlimit")) }
        guard limits.rlim_cur < limits.rlim_max else { return (Int(clamping: limits.rlim_cur), nil) }
        let soft = limits.rlim_cur
        limits.rlim_cur = limits.rlim_max
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else {
            return (Int(clamping: soft), SystemError("raise the open-file limit from \(soft) to \(limits.rlim_max)"))
        }
        return (Int(clamping: limits.rlim_max), nil)
    }
}
