#if canImport(Glibc)
import Glibc
#endif

/// Starts `body` on a new OS thread. Used for loops that block in `poll` or
/// `recv` for as long as the network is idle: doing that on one of Swift's few
/// cooperative threads (two on a 2-core host) would starve every other task.
package func startDetachedThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { context in
        let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
        box.body()
        return nil
    }, context)
    precondition(result == 0, "pthread_create failed: \(String(cString: strerror(result)))")
    pthread_detach(thread)
}
