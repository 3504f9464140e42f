import COpenSSL
import Foundation
import MITMTLS

/// The bare public key, as Apple's `SecKeyCopyExternalRepresentation` returns it: not a pin.
///
/// For RSA it is the PKCS#1 `RSAPublicKey` DER, for EC the uncompressed X9.63 point
/// (`04 || X || Y`). Pinning APIs hash the whole SubjectPublicKeyInfo instead, which wraps these
/// bytes in an algorithm identifier; hashing the raw bytes is the classic hand-rolled-pin bug.
public struct RawPublicKey: Sendable, Equatable {
    /// The raw key bytes.
    public let bytes: [UInt8]
    /// What the bytes are, e.g. `PKCS#1 RSAPublicKey`.
    public let format: String
    /// The bytes that, put in front of the raw key, give the DER SubjectPublicKeyInfo; nil when the
    /// certificate's SubjectPublicKeyInfo does not end with the raw key (a compressed EC point).
    public let subjectPublicKeyInfoHeader: [UInt8]?

    /// Base64 of the SHA-256 of the raw bytes: what a hand-rolled hash of the raw key gives.
    public var sha256Base64: String { SHA256Digest.base64(bytes) }

    /// The raw public key of `certificate`.
    public init(of certificate: X509Certificate) throws(PinsError) {
        guard let key = X509_get0_pubkey(certificate.pointer) else {
            throw PinsError("the certificate \(certificate.subject) has a public key OpenSSL cannot decode")
        }
        let bitString = Self.subjectPublicKeyBits(of: certificate)
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_EC:
            guard let point = Self.uncompressedPoint(of: key) else {
                throw PinsError("cannot read the EC point of \(certificate.subject)")
            }
            bytes = point
            format = "uncompressed X9.63 EC point (04 || X || Y)"
        case EVP_PKEY_RSA:
            bytes = bitString
            format = "PKCS#1 RSAPublicKey (DER)"
        default:
            bytes = bitString
            format = "subjectPublicKey BIT STRING contents"
        }
        let info = certificate.subjectPublicKeyInfoDER
        if !bytes.isEmpty, info.count > bytes.count, info.suffix(bytes.count).elementsEqual(bytes) {
            subjectPublicKeyInfoHeader = Array(info.prefix(info.count - bytes.count))
        } else {
            subjectPublicKeyInfoHeader = nil
        }
    }

    /// The contents of the SubjectPublicKeyInfo's BIT STRING.
    private static func subjectPublicKeyBits(of certificate: X509Certificate) -> [UInt8] {
        var data: UnsafePointer<UInt8>?
        var length: Int32 = 0
        guard let info = X509_get_X509_PUBKEY(certificate.pointer),
            X509_PUBKEY_get0_param(nil, &data, &length, nil, info) == 1,
            let data, length > 0
        else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(length)))
    }

    /// `04 || X || Y`, each coordinate padded to the field size, whatever form the certificate used.
    private static func uncompressedPoint(of key: OpaquePointer) -> [UInt8]? {
        let size = (Int(EVP_PKEY_get_bits(key)) + 7) / 8
        guard size > 0, let x = coordinate(OSSL_PKEY_PARAM_EC_PUB_X, of: key, size: size),
            let y = coordinate(OSSL_PKEY_PARAM_EC_PUB_Y, of: key, size: size)
        else { return nil }
        return [0x04] + x + y
    }

    private static func coordinate(_ name: String, of key: OpaquePointer, size: Int) -> [UInt8]? {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: size)
        guard BN_bn2binpad(number, &bytes, Int32(size)) == Int32(size) else { return nil }
        return bytes
    }
}
