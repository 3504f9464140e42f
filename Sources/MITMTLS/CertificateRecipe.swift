import COpenSSL
import FoundationEssentials
import Glibc

/// One certificate described field by field, then signed: what the certificate profiles vary one at a time.
/// Only constant strings go through OpenSSL's config syntax; names go through `SubjectAlternativeNameExtension`.
struct CertificateRecipe {
    /// Subject entries, as in `[("O", "mitm-proxy"), ("CN", "host")]`; empty for no subject.
    var subject: [(String, String)]
    /// subjectAltName entries (none for a CA).
    var names: [SubjectAlternativeName] = []
    /// The key the certificate certifies.
    var subjectKey: PrivateKey
    /// The issuing certificate: its subject becomes the issuer name and its key identifier the AKI. Nil: self-issued.
    var issuer: X509Certificate?
    /// The key that signs (the issuer's, unless the recipe lies about it).
    var signingKey: PrivateKey
    var notBefore: Date
    var notAfter: Date
    var basicConstraints: StaticString = "critical,CA:FALSE"
    var keyUsage: StaticString? = "critical,digitalSignature"
    var extendedKeyUsage: StaticString? = "serverAuth"
    /// Whether to carry a subjectKeyIdentifier (CAs and intermediates).
    var subjectKeyIdentifier = false
    /// Takes the issuer's exact name as the subject too (self-issued, RFC 5280 §3.3) instead of `subject`.
    var subjectIsIssuerName = false

    /// A server leaf for `names`, in the shape `LeafForger` makes, issued by `issuer` and signed by `signingKey`.
    static func leaf(
        names: [SubjectAlternativeName], key: PrivateKey, issuer: X509Certificate?, signingKey: PrivateKey,
        notBefore: Date, notAfter: Date
    ) -> CertificateRecipe {
        let keyUsage: StaticString =
            key.algorithm == "RSA" ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature"
        return CertificateRecipe(
            subject: commonName(for: names).map { [("O", "mitm-proxy"), ("CN", $0)] } ?? [], names: names,
            subjectKey: key, issuer: issuer, signingKey: signingKey, notBefore: notBefore, notAfter: notAfter,
            keyUsage: keyUsage)
    }

    /// A CA certificate in the shape of the proxy's own (DESIGN.md "Certificates").
    static func authority(name: String, key: PrivateKey, now: Date) -> CertificateRecipe {
        CertificateRecipe(
            subject: [("O", "mitm-proxy"), ("CN", name)], subjectKey: key, issuer: nil, signingKey: key,
            notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(365 * 86_400),
            basicConstraints: "critical,CA:TRUE,pathlen:0", keyUsage: "critical,keyCertSign,cRLSign",
            extendedKeyUsage: nil, subjectKeyIdentifier: true)
    }

    /// The subject CN of a leaf: the first name when it fits in 64 characters.
    static func commonName(for names: [SubjectAlternativeName]) -> String? {
        switch names.first {
        case .dns(let host)? where host.utf8.count <= 64: host
        case .ipAddress(let bytes)?: IPAddressText.format(bytes)
        default: nil
        }
    }

    func sign() throws(TLSError) -> X509Certificate {
        guard let raw = X509_new() else { throw TLSError("allocating a certificate") }
        let certificate = X509Certificate(taking: raw)
        guard X509_set_version(raw, 2) == 1 else { throw TLSError("setting certificate version") }
        try X509Extensions.setRandomSerial(raw)
        try X509Extensions.setValidity(raw, from: notBefore, until: notAfter)
        guard let subjectName = X509_get_subject_name(raw) else { throw TLSError("reading the subject name") }
        if subjectIsIssuerName, let issuer {
            guard X509_set_subject_name(raw, X509_get_subject_name(issuer.pointer)) == 1 else {
                throw TLSError("setting the subject name")
            }
        } else {
            try X509Extensions.setName(subjectName, subject)
        }
        let issuerName = issuer.map { X509_get_subject_name($0.pointer) } ?? subjectName
        guard X509_set_issuer_name(raw, issuerName) == 1, X509_set_pubkey(raw, subjectKey.pointer) == 1 else {
            throw TLSError("setting issuer and public key")
        }
        if !names.isEmpty { try SubjectAlternativeNameExtension.add(names, critical: subject.isEmpty, to: raw) }
        let issuerPointer = issuer?.pointer ?? raw
        var extensions: [(Int32, StaticString)] = [(NID_basic_constraints, basicConstraints)]
        if let keyUsage { extensions.append((NID_key_usage, keyUsage)) }
        if let extendedKeyUsage { extensions.append((NID_ext_key_usage, extendedKeyUsage)) }
        if subjectKeyIdentifier { extensions.append((NID_subject_key_identifier, "hash")) }
        if issuer != nil { extensions.append((NID_authority_key_identifier, "keyid:always")) }
        for (nid, value) in extensions {
            let built = try X509Extensions.make(nid, value, issuer: issuerPointer, subject: raw)
            defer { X509_EXTENSION_free(built) }
            try X509Extensions.add(built, to: raw)
        }
        guard X509_sign(raw, signingKey.pointer, EVP_sha256()) > 0 else { throw TLSError("signing a certificate") }
        return try certificate.reparsed()
    }
}
