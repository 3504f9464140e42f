import CMITMTLSShims
import COpenSSL

/// An owned OpenSSL private key (`EVP_PKEY`).
// @unchecked Sendable: the key is never mutated after creation, and OpenSSL keys are safe to share read-only.
public final class PrivateKey: @unchecked Sendable {
    /// The underlying `EVP_PKEY*`, owned by this object.
    public let pointer: OpaquePointer

    /// Takes ownership of an `EVP_PKEY*`.
    public init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Generates a NIST P-256 key.
    public static func generateP256() throws(TLSError) -> PrivateKey {
        guard let key = mitm_generate_ec_key("P-256") else { throw TLSError("generating a P-256 key") }
        return PrivateKey(taking: key)
    }

    /// Generates an RSA key of `bits` bits (slow: 50-400 ms for 2048 bits).
    public static func generateRSA(bits: Int) throws(TLSError) -> PrivateKey {
        guard let key = mitm_generate_rsa_key(UInt32(bits)) else { throw TLSError("generating an RSA-\(bits) key") }
        return PrivateKey(taking: key)
    }

    /// Reads a PEM private key (PKCS#8 or traditional).
    public convenience init(pem: [UInt8]) throws(TLSError) {
        let bio = try MemoryBIO(bytes: pem)
        guard let key = PEM_read_bio_PrivateKey(bio.pointer, nil, nil, nil) else {
            throw TLSError("reading a PEM private key")
        }
        self.init(taking: key)
    }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public func pkcs8PEM() throws(TLSError) -> [UInt8] {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PKCS8PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw TLSError("writing a PKCS#8 private key")
        }
        return bio.contents
    }

    /// The DER SubjectPublicKeyInfo of the public half.
    public func subjectPublicKeyInfoDER() throws(TLSError) -> [UInt8] {
        guard let der = derEncoded({ i2d_PUBKEY(pointer, $0) }) else { throw TLSError("encoding a public key") }
        return der
    }

    /// A copy backed by OpenSSL's legacy EC_KEY/RSA structures. OpenSSL 3 re-encodes a provider key
    /// through its encoder machinery on every `X509_set_pubkey` (~300 µs); a legacy key encodes
    /// directly (~5 µs) and signs faster, which is what makes forging once per host cheap.
    func legacyCopy() -> PrivateKey? {
        guard let copy = EVP_PKEY_new() else { return nil }
        var ok: Int32 = 0
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_EC:
            if let ec = EVP_PKEY_get1_EC_KEY(pointer) {
                ok = EVP_PKEY_set1_EC_KEY(copy, ec)
                EC_KEY_free(ec)
            }
        case EVP_PKEY_RSA:
            if let rsa = EVP_PKEY_get1_RSA(pointer) {
                ok = EVP_PKEY_set1_RSA(copy, rsa)
                RSA_free(rsa)
            }
        default:
            break
        }
        guard ok == 1 else {
            EVP_PKEY_free(copy)
            _ = OpenSSLErrorStack.drain()
            return nil
        }
        return PrivateKey(taking: copy)
    }

    /// `EC` or `RSA` (or OpenSSL's short name for other types).
    public var algorithm: String { PublicKeyDescription.algorithmName(of: pointer) }

    /// Key size in bits.
    public var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    deinit { EVP_PKEY_free(pointer) }
}

/// Naming of key types shared by private keys and certificates' public keys.
enum PublicKeyDescription {
    static func algorithmName(of key: OpaquePointer) -> String {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA: return "RSA"
        case EVP_PKEY_EC: return "EC"
        case EVP_PKEY_ED25519: return "Ed25519"
        default:
            guard let name = OBJ_nid2sn(EVP_PKEY_get_base_id(key)) else { return "unknown" }
            return String(cString: name)
        }
    }

    /// The curve name of an EC key (`prime256v1` -> `P-256`), or nil.
    static func curveName(of key: OpaquePointer) -> String? {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return nil }
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, &buffer, buffer.count, &length) == 1
        else {
            return nil
        }
        let name = String(cBuffer: buffer)
        switch name {
        case "prime256v1": return "P-256"
        case "secp384r1": return "P-384"
        case "secp521r1": return "P-521"
        default: return name
        }
    }
}
