import Foundation
@testable import MITMPins

/// libFuzzer entry: the ATS reader of `pins check` on an Info.plist (XML or binary property list).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? ATSPlistReader.read(Data(bytes: data, count: size), path: "Info.plist")
    return 0
}
