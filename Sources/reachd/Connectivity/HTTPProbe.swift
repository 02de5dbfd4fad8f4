import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// One plain-HTTP GET out of one interface, for the connectivity check.
/// Blocking: the daemon runs it on a thread of its own.
///
/// Written by hand rather than with libcurl, which NetworkManager uses: linking
/// libcurl (with the TLS, Kerberos and LDAP libraries it brings) added 5.8 MB
/// to the daemon's idle RSS (16.6 → 22.4 MiB) and 7–10 ms to its start-up
/// (measured with `LD_PRELOAD`), for a probe that needs one GET over plain
/// HTTP, no redirects, and the status line, a few headers and the start of the
/// body of the answer.
enum HTTPProbe {
    /// Enough for any status line and headers; the body matters only at its start.
    static let responseLimit = 16 * 1024

    /// Why this process may not make probes, or `nil` when it may: a service
    /// whose unit forbids Internet sockets (`RestrictAddressFamilies=`) would
    /// otherwise judge every probe `limited` and call an online host offline.
    static func forbidden() -> String? {
        for (family, name) in [(AF_INET, "AF_INET"), (AF_INET6, "AF_INET6")] {
            let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd >= 0 {
                close(fd)
                continue
            }
            // No IPv6 in this kernel is no policy; the check simply skips it.
            if family == AF_INET6 && errno == EAFNOSUPPORT { continue }
            return "cannot create \(name) sockets (\(String(cString: strerror(errno)))): "
                + "allow them with RestrictAddressFamilies= in the unit, or pass --no-check"
        }
        return nil
    }

    /// Resolves the check's host in `family`, connects out of `interface` and
    /// asks, all by `deadline`. The first address that answers decides.
    ///
    /// The name is resolved as a step of its own: when the resolver fails
    /// (no answer by its share of the time, or EAI_AGAIN or EAI_FAIL), and
    /// `kept` (the address that last answered as expected) answers, the
    /// report says the name failed while the path works. A resolver that
    /// answers that the name has no address is working. Without a kept
    /// address the whole time is the name's.
    static func run(
        _ check: ConnectivityCheck, family: AddressFamily, interface: String, kept: CheckServerAddress?,
        deadline: ContinuousClock.Instant
    ) -> ProbeReport {
        // Some of the time is kept for asking the kept address: on a path that
        // works, a connection takes milliseconds, a resolver's retry seconds.
        let resolveBy = kept == nil ? deadline : deadline - min(.milliseconds(500), (deadline - .now) / 3)
        let addresses: [CheckServerAddress]
        switch CheckHostResolution.resolve(check, family: family, by: resolveBy) {
        case .addresses(let resolved):
            addresses = resolved
        case .noAddress:
            // The resolver answered: names work, the check's host has
            // another family's address and none of this one.
            return ProbeReport(.noAddress)
        case .noSuchName:
            // The resolver answered: names work, the check's host is not there.
            return ProbeReport(.failed(.dns))
        case .failed:
            guard let kept, ContinuousClock.now < deadline else { return ProbeReport(.failed(.dns)) }
            let outcome = attempt(kept, check, interface: interface, deadline: deadline)
            guard case .answered = outcome else { return ProbeReport(.failed(.dns)) }
            return ProbeReport(outcome, nameFailed: true, answeredAt: kept)
        }
        var failure = ProbeFailure.unreachable
        for address in addresses where ContinuousClock.now < deadline {
            let outcome = attempt(address, check, interface: interface, deadline: deadline)
            switch outcome {
            case .answered: return ProbeReport(outcome, answeredAt: address)
            case .failed(let reason): failure = reason
            case .noAddress: break  // An attempt at an address always has one.
            }
        }
        return ProbeReport(.failed(ContinuousClock.now >= deadline ? .timeout : failure))
    }

    private static func attempt(
        _ address: CheckServerAddress, _ check: ConnectivityCheck, interface: String, deadline: ContinuousClock.Instant
    ) -> ProbeOutcome {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(address.family, type, 0)
        guard fd >= 0 else { return .failed(.broken) }
        defer { close(fd) }
        // Out of the family's egress link, so the probe tests the path the
        // status names and no other. Unprivileged since Linux 5.7.
        let bound = interface.withCString { setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0) + 1)) }
        guard bound == 0 else { return .failed(.unreachable) }

        if address.withSocketAddress({ connect(fd, $0, $1) }) != 0 {
            guard errno == EINPROGRESS else { return .failed(reason(errno)) }
            guard waitFor(.writable, on: fd, until: deadline) else { return .failed(.timeout) }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else { return .failed(reason(error)) }
        }

        let request = check.request
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count >= 0 {
                sent += count
            } else if errno == EAGAIN || errno == EINTR {
                guard waitFor(.writable, on: fd, until: deadline) else { return .failed(.timeout) }
            } else {
                return .failed(.broken)
            }
        }

        // Until the server closes (Connection: close), the limit or the
        // deadline; then judge what arrived.
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while received.count < responseLimit, waitFor(.readable, on: fd, until: deadline) {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                break
            }
            received += chunk[0..<count]
        }
        guard let response = HTTPResponse(parsing: received) else {
            // Nothing, or not HTTP: by the deadline, or because the server closed.
            return .failed(received.isEmpty && ContinuousClock.now >= deadline ? .timeout : .broken)
        }
        return .answered(response)
    }

    /// Whether `fd` became ready for `interest` before `deadline`.
    private static func waitFor(_ interest: Interest, on fd: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        (try? PollSet.wait(for: fd, interest, until: deadline)) ?? false
    }

    private static func reason(_ error: Int32) -> ProbeFailure {
        switch error {
        case ECONNREFUSED: .refused
        case ETIMEDOUT: .timeout
        case ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL: .unreachable
        default: .broken
        }
    }
}
