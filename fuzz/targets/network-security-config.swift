import Foundation
@testable import MITMPins

/// libFuzzer entry: the Android network_security_config.xml reader of `pins check`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? NetworkSecurityConfigReader.read(Data(bytes: data, count: size), path: "network_security_config.xml")
    return 0
}
