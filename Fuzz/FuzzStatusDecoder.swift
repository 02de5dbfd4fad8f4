import Reachability

/// The daemon-line decoder: any line a program on the socket may send, a
/// status or a destination answer. Beyond not trapping: a message that
/// decodes encodes to a line that decodes to the same message (the check
/// that found `changed_at` moving 1 ms a round).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStatusDecoder(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let line = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard let message = try? DaemonMessage.decode(line) else { return 0 }
    switch message {
    case .status, .destination:
        let again = message.line().dropLast()
        guard let decoded = try? DaemonMessage.decode(again) else {
            fatalError("a decoded message does not decode once encoded: \(String(decoding: again, as: UTF8.self))")
        }
        require(decoded == message, "a message changed in a round: \(String(decoding: again, as: UTF8.self))")
    case .error, .unrecognized:
        break
    }
    return 0
}
