import Reachability

/// The status decoder: any line a program on the socket may send. Beyond not
/// trapping: a status that decodes encodes to a line that decodes to the same
/// status (the check that found `changed_at` moving 1 ms a round).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStatusDecoder(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let line = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard case .status(let status)? = try? DaemonMessage.decode(line) else { return 0 }
    let again = DaemonMessage.status(status).line().dropLast()
    guard case .status(let decoded)? = try? DaemonMessage.decode(again) else {
        fatalError("a decoded status does not decode once encoded: \(String(decoding: again, as: UTF8.self))")
    }
    require(decoded == status, "a status changed in a round: \(String(decoding: again, as: UTF8.self))")
    return 0
}
