#if canImport(Glibc)
import Glibc
#endif

/// Starts `body` on a new OS thread. Used for loops that block in `poll` or
/// `recv` for as long as the network is idle: doing that on one of Swift's few
/// cooperative threads (two on a 2-core host) would starve every other task.
package func startDetachedThread(_ body: @escaping @Sendable () -> Void) {
    let result = startDetachedThreadIfPossible(body)
    precondition(result == 0, "pthread_create failed: \(String(cString: strerror(result)))")
}

/// ``startDetachedThread(_:)`` for work that may be dropped or done
/// otherwise: returns `pthread_create`'s error (EAGAIN under a process or
/// thread limit) instead of stopping the process, 0 when the thread runs.
@discardableResult
package func startDetachedThreadIfPossible(_ body: @escaping @Sendable () -> Void) -> Int32 {
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
    guard result == 0 else {
        Unmanaged<AnyObject>.fromOpaque(context).release()
        return result
    }
    pthread_detach(thread)
    return 0
}
