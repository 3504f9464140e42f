/// libFuzzer entry: an HTTP/2 session in the client role (the proxy toward an upstream), with one request sent,
/// fed a server's raw frames.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    HTTP2Feeding.run(role: .client, frames: Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
