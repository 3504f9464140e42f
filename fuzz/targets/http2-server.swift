/// libFuzzer entry: an HTTP/2 session in the server role (the proxy toward its client) fed a client's raw frames.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    HTTP2Feeding.run(role: .server, frames: Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
