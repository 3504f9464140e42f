/// libFuzzer entry: HTTP/1 request parsing, whole and split at random points, must agree and never crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    HTTP1Feeding.check(Array(UnsafeBufferPointer(start: data, count: size)), role: .request)
    return 0
}
