@testable import MITMPins
import MITMTLS

/// libFuzzer entry: certificate and key loading from file bytes (PEM chains, one DER certificate, PEM private keys),
/// as `pins` and the CA directory read them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let certificates = try? CertificateFile.certificates(in: bytes, path: "fuzz.pem") {
        for certificate in certificates { _ = certificate.pem }
    }
    _ = try? PrivateKey(pem: bytes)
    return 0
}
