import COpenSSL
import FoundationEssentials
import Glibc
import MITMCore

/// SHA-256 through OpenSSL's EVP interface.
public enum SHA256Digest {
    /// The 32-byte SHA-256 of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) cannot fail on in-memory input")
        return digest
    }

    /// Base64 of the SHA-256 of `bytes`: the form every pinning API uses.
    public static func base64(_ bytes: [UInt8]) -> String {
        Data(hash(bytes)).base64EncodedString()
    }

    /// Lowercase hex of the SHA-256 of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        DigitText.hex(hash(bytes))
    }
}
