import Foundation

/// libFuzzer entry: `har summary` on a HAR file's bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = HARSummary(harFile: Data(bytes: data, count: size))?.text
    return 0
}
