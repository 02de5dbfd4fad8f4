#if canImport(Glibc)
import Glibc
#endif

/// A self-pipe that one thread polls and any other thread signals: how a thread
/// blocked in `poll`/`epoll_wait` with no timeout is told to stop.
package final class WakeSignal: Sendable {
    /// The end to poll for readability.
    package let fileDescriptor: Int32
    /// The end `signal()` writes to; a signal handler may write to it directly.
    package let writeDescriptor: Int32

    package init() throws(SystemError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SystemError("pipe") }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        fileDescriptor = ends[0]
        writeDescriptor = ends[1]
    }

    deinit {
        close(fileDescriptor)
        close(writeDescriptor)
    }

    /// Empties the pipe: readable again only after the next ``signal()``.
    package func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(fileDescriptor, &buffer, buffer.count) > 0 {}
    }

    /// Makes the read end readable; safe from any thread, any number of times.
    package func signal() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }
}
