import COpenSSL
import Foundation
import MITMTLS

/// Backup pins: pins for keys that are not in the chain yet (a spare key kept offline, the next CA).
public enum BackupPin {
    /// `value` in canonical form, or an error when it is not base64 of a SHA-256.
    public static func validated(_ value: String) throws(PinsError) -> String {
        let bare =
            value.hasPrefix("sha256//")
            ? String(value.dropFirst(8))
            : value.hasPrefix("sha256/") ? String(value.dropFirst(7)) : value
        guard let data = Data(base64Encoded: bare), data.count == 32 else {
            throw PinsError(
                "backup pin \(value) is not a pin: expected the base64 of a SHA-256 (44 characters ending in =)")
        }
        return data.base64EncodedString()
    }

    /// The pin of the public key in a PEM file: a public key, a private key, a certificate request
    /// or a certificate.
    public static func pin(ofKeyFile path: String) throws(PinsError) -> String {
        let bytes = try FileBytes.read(path, what: "backup key file")
        guard let info = subjectPublicKeyInfo(in: bytes) else {
            throw PinsError(
                "\(path) holds no PEM public key, private key, certificate request or certificate to compute a backup pin from"
            )
        }
        return SHA256Digest.base64(info)
    }

    private static func subjectPublicKeyInfo(in bytes: [UInt8]) -> [UInt8]? {
        defer { ERR_clear_error() }
        if let key = withBIO(bytes, { PEM_read_bio_PUBKEY($0, nil, nil, nil) }) {
            defer { EVP_PKEY_free(key) }
            return encode(key)
        }
        if let key = withBIO(bytes, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) {
            defer { EVP_PKEY_free(key) }
            return encode(key)
        }
        if let request = withBIO(bytes, { PEM_read_bio_X509_REQ($0, nil, nil, nil) }) {
            defer { X509_REQ_free(request) }
            return X509_REQ_get0_pubkey(request).flatMap(encode)
        }
        if let certificates = try? X509Certificate.pemChain(bytes), let first = certificates.first {
            return first.subjectPublicKeyInfoDER
        }
        return nil
    }

    private static func withBIO(_ bytes: [UInt8], _ read: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        _ = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32($0.count)) }
        return read(bio)
    }

    private static func encode(_ key: OpaquePointer) -> [UInt8]? {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        return written == length ? bytes : nil
    }
}
