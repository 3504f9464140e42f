/// libFuzzer entry: HTTP/1 response parsing (chunked bodies, trailers, close-delimited bodies, responses to HEAD and
/// CONNECT), whole and split at random points, must agree and never crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    HTTP1Feeding.check(Array(UnsafeBufferPointer(start: data, count: size)), role: .response)
    return 0
}
