import Foundation
@testable import Reachability

#if canImport(Glibc)
import Glibc
#endif

/// A daemon from the future: answers every connection with one status line of
/// protocol version 2, then hangs up. Runs on a thread of its own, so its loop
/// never occupies one of the concurrency runtime's threads.
final class FakeDaemon: @unchecked Sendable {
    let path: String
    private let directory: URL
    private let listener: Int32
    private let stop: WakeSignal

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rd-fake-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("reachd.sock").path
        listener = try UnixSocket.listen(at: path)
        stop = try WakeSignal()
        let (listener, stop) = (listener, stop)
        startDetachedThread {
            var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: stop.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            while poll(&descriptors, 2, -1) >= 0, descriptors[1].revents == 0 {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { continue }
                try? UnixSocket.writeAll(client, Array(#"{"type":"status","version":2}"#.utf8) + [10])
                close(client)
            }
            close(listener)
        }
    }

    deinit {
        stop.signal()
        try? FileManager.default.removeItem(at: directory)
    }
}
