import MITMCore

/// libFuzzer entry: the TLS ClientHello parser on raw bytes, whole and on every prefix a slow client might send.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = ClientHelloParser.parse(bytes)
    var cut = 0
    while cut < bytes.count {
        _ = ClientHelloParser.parse(bytes[..<cut])
        cut += 1 + cut / 4
    }
    return 0
}
