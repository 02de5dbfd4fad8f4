import Reachability

/// The daemon's request parser: any line any local user may send. Beyond not
/// trapping: a request that parses writes a line that parses to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParser(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let line = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard case .success(let request) = ClientRequest.parse(line) else { return 0 }
    require((try? ClientRequest.parse(request.line.dropLast()).get()) == request, "\(request) does not parse back")
    return 0
}
