import CMITMTLSShims
import COpenSSL
import FoundationEssentials
import Glibc

/// An owned OpenSSL X.509 certificate (`X509`).
// @unchecked Sendable: certificates are immutable once built and OpenSSL allows concurrent reads.
public final class X509Certificate: @unchecked Sendable {
    /// The underlying `X509*`, owned by this object.
    public let pointer: OpaquePointer
    /// Whether OpenSSL keeps the certificate's encoding (it parsed it). One built and signed here is encoded again
    /// every time it is sent, twice per handshake, until `reparsed()`.
    public let keepsEncoding: Bool

    /// Takes ownership of an `X509*`; `keepsEncoding`: false for a certificate built here (not parsed).
    public init(taking pointer: OpaquePointer, keepsEncoding: Bool = true) {
        self.pointer = pointer
        self.keepsEncoding = keepsEncoding
    }

    /// Parses one DER certificate; trailing bytes or truncation are errors.
    public convenience init(der: [UInt8]) throws(TLSError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let certificate = d2i_X509(nil, &cursor, buffer.count)
            if let certificate, cursor != buffer.baseAddress.map({ $0 + buffer.count }) {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else {
            throw TLSError("parsing a DER certificate (\(der.count) bytes): truncated or not a certificate")
        }
        self.init(taking: parsed)
    }

    /// Every certificate in a PEM text, in order. Throws if there is none or one is damaged.
    public static func pemChain(_ pem: [UInt8]) throws(TLSError) -> [X509Certificate] {
        let bio = try MemoryBIO(bytes: pem)
        var chain: [X509Certificate] = []
        while let certificate = PEM_read_bio_X509(bio.pointer, nil, nil, nil) {
            chain.append(X509Certificate(taking: certificate))
        }
        let trailing = OpenSSLErrorStack.drain()
        let noMoreCertificates = trailing.entries.allSatisfy { $0.contains("no start line") }
        guard noMoreCertificates else { throw TLSError("reading PEM certificates", stack: trailing) }
        guard !chain.isEmpty else { throw TLSError("reading PEM certificates: no CERTIFICATE block found") }
        return chain
    }

    /// Reads a file's certificates: PEM (one or more) or a single DER certificate.
    public static func certificates(inFileBytes bytes: [UInt8]) throws(TLSError) -> [X509Certificate] {
        let pemMarker = Array("-----BEGIN".utf8)
        let looksLikePEM =
            bytes.count >= pemMarker.count
            && bytes.indices.dropLast(pemMarker.count - 1).contains {
                bytes[$0..<$0 + pemMarker.count].elementsEqual(pemMarker)
            }
        return looksLikePEM ? try pemChain(bytes) : [try X509Certificate(der: bytes)]
    }

    /// This certificate parsed back from its DER, so that OpenSSL keeps its encoding. Parsing costs 1.56 M instructions,
    /// three times what signing it does (OpenSSL 3.0 builds a decoder for the public key each time: 1.2 M).
    func reparsed() throws(TLSError) -> X509Certificate { try X509Certificate(der: der) }

    /// The certificate in DER.
    public var der: [UInt8] {
        derEncoded { i2d_X509(pointer, $0) } ?? []
    }

    /// The certificate as PEM text.
    public var pem: String {
        let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
    }

    /// The DER SubjectPublicKeyInfo: what key pins hash.
    public var subjectPublicKeyInfoDER: [UInt8] {
        guard let key = X509_get0_pubkey(pointer) else { return [] }
        return derEncoded { i2d_PUBKEY(key, $0) } ?? []
    }

    /// The key pin: base64(SHA-256(DER SubjectPublicKeyInfo)).
    public var spkiSHA256Base64: String { SHA256Digest.base64(subjectPublicKeyInfoDER) }

    /// SHA-256 fingerprint of the whole certificate, lowercase hex.
    public var fingerprintSHA256: String { SHA256Digest.hex(der) }

    /// The subject as `CN=..., O=...` (most specific first, as OpenSSL's RFC 2253 output).
    public var subject: String { DistinguishedName.text(X509_get_subject_name(pointer)) }

    /// The issuer as `CN=..., O=...`.
    public var issuer: String { DistinguishedName.text(X509_get_issuer_name(pointer)) }

    /// The subject's common name, if any.
    public var commonName: String? { DistinguishedName.commonName(X509_get_subject_name(pointer)) }

    /// Start of validity.
    public var notBefore: Date { ASN1Time.date(X509_get0_notBefore(pointer)) }

    /// End of validity.
    public var notAfter: Date { ASN1Time.date(X509_get0_notAfter(pointer)) }

    /// Whether subject and issuer names are equal (a root or a self-signed leaf).
    public var isSelfIssued: Bool {
        X509_NAME_cmp(X509_get_subject_name(pointer), X509_get_issuer_name(pointer)) == 0
    }

    /// Whether the certificate may sign others (basicConstraints CA:TRUE).
    public var isCA: Bool { X509_check_ca(pointer) >= 1 }

    /// `EC` or `RSA` (or OpenSSL's short name).
    public var keyAlgorithm: String {
        guard let key = X509_get0_pubkey(pointer) else { return "unknown" }
        return PublicKeyDescription.algorithmName(of: key)
    }

    /// Public key size in bits.
    public var keyBits: Int {
        guard let key = X509_get0_pubkey(pointer) else { return 0 }
        return Int(EVP_PKEY_get_bits(key))
    }

    /// `P-256`, `P-384` for EC keys.
    public var keyCurve: String? {
        guard let key = X509_get0_pubkey(pointer) else { return nil }
        return PublicKeyDescription.curveName(of: key)
    }

    /// The serial number in uppercase hex.
    public var serialHex: String {
        guard let serial = X509_get0_serialNumber(pointer), let number = ASN1_INTEGER_to_BN(serial, nil) else {
            return ""
        }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "" }
        defer { mitm_openssl_free(hex) }
        return String(cString: hex)
    }

    /// DNS names and IP addresses from subjectAltName.
    public var subjectAlternativeNames: [SubjectAlternativeName] {
        SubjectAlternativeName.read(from: pointer)
    }

    /// Whether `other` is this same certificate (byte-identical DER).
    public func isSame(as other: X509Certificate) -> Bool {
        X509_cmp(pointer, other.pointer) == 0
    }

    deinit { X509_free(pointer) }
}
