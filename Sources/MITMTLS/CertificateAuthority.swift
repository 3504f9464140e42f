import CMITMTLSShims
import COpenSSL
import FoundationEssentials
import Glibc

/// The proxy's own certificate authority: created once per install in the CA directory, then reused.
public final class CertificateAuthority: Sendable {
    /// The CA certificate (self-signed root).
    public let certificate: X509Certificate
    /// The CA private key.
    public let key: PrivateKey
    /// Where the CA lives.
    public let files: CertificateAuthorityFiles
    /// Notes for the user produced while loading (e.g. permissions tightened).
    public let warnings: [String]
    /// Whether this call created the CA (first start) rather than loading it.
    public let wasCreated: Bool

    init(
        certificate: X509Certificate, key: PrivateKey, files: CertificateAuthorityFiles, warnings: [String],
        wasCreated: Bool
    ) {
        self.certificate = certificate
        self.key = key
        self.files = files
        self.warnings = warnings
        self.wasCreated = wasCreated
    }

    /// Loads the CA from `directory`, creating it when the directory holds no CA yet.
    /// A half-written, unreadable or mismatched CA is an error, never silently replaced.
    public static func loadOrCreate(directory: String) throws(CertificateAuthorityError) -> CertificateAuthority {
        let files = CertificateAuthorityFiles(directory: directory)
        var warnings: [String] = []
        if let warning = try FileStore.ensurePrivateDirectory(files.directory) { warnings.append(warning) }
        // Held until this function returns: a second process waits here, then loads the CA the first one made.
        let lock = try CADirectoryLock.creation(in: files.directory)
        defer { withExtendedLifetime(lock) {} }
        let hasCertificate = FileStore.exists(files.certificatePEM)
        let hasKey = FileStore.exists(files.privateKey)
        switch (hasCertificate, hasKey) {
        case (false, false):
            return try create(files: files, warnings: warnings)
        case (true, false):
            throw CertificateAuthorityError(
                "the CA directory is half-written: \(files.certificatePEM) exists but \(files.privateKey) is missing. "
                    + "Restore the key, or run `mitm-proxy ca regenerate --ca-dir \(files.directory)` and reinstall the new CA on your devices."
            )
        case (false, true):
            throw CertificateAuthorityError(
                "the CA directory is half-written: \(files.privateKey) exists but \(files.certificatePEM) is missing. "
                    + "Restore the certificate, or run `mitm-proxy ca regenerate --ca-dir \(files.directory)` and reinstall the new CA on your devices."
            )
        case (true, true):
            return try load(files: files, warnings: warnings)
        }
    }

    /// Replaces any CA in `directory` with a new one. Devices must install the new certificate.
    public static func regenerate(directory: String) throws(CertificateAuthorityError) -> CertificateAuthority {
        let files = CertificateAuthorityFiles(directory: directory)
        var warnings: [String] = []
        if let warning = try FileStore.ensurePrivateDirectory(files.directory) { warnings.append(warning) }
        let lock = try CADirectoryLock.creation(in: files.directory)
        defer { withExtendedLifetime(lock) {} }
        return try create(files: files, warnings: warnings)
    }

    private static func load(files: CertificateAuthorityFiles, warnings: [String]) throws(CertificateAuthorityError)
        -> CertificateAuthority
    {
        let certificateBytes = try FileStore.read(files.certificatePEM, what: "CA certificate")
        let keyBytes = try FileStore.read(files.privateKey, what: "CA private key")
        let certificate: X509Certificate
        do {
            guard let first = try X509Certificate.pemChain(certificateBytes).first else {
                throw TLSError("no certificate")
            }
            certificate = first
        } catch {
            throw CertificateAuthorityError(
                "\(files.certificatePEM) is not a readable PEM certificate (\(error)). "
                    + "Restore it, or run `mitm-proxy ca regenerate --ca-dir \(files.directory)`.")
        }
        let key: PrivateKey
        do {
            key = try PrivateKey(pem: keyBytes)
        } catch {
            throw CertificateAuthorityError(
                "\(files.privateKey) is not a readable PEM private key (\(error)). "
                    + "Restore it, or run `mitm-proxy ca regenerate --ca-dir \(files.directory)`.")
        }
        guard X509_check_private_key(certificate.pointer, key.pointer) == 1 else {
            _ = OpenSSLErrorStack.drain()
            throw CertificateAuthorityError(
                "\(files.privateKey) does not match the certificate \(files.certificatePEM). "
                    + "Restore the matching pair, or run `mitm-proxy ca regenerate --ca-dir \(files.directory)`.")
        }
        guard certificate.isCA else {
            throw CertificateAuthorityError(
                "\(files.certificatePEM) is not a CA certificate (basicConstraints CA:TRUE missing). "
                    + "Run `mitm-proxy ca regenerate --ca-dir \(files.directory)`.")
        }
        var notes = warnings
        if certificate.notAfter < Date() {
            throw CertificateAuthorityError(
                "the CA certificate \(files.certificatePEM) expired on \(certificate.notAfter). "
                    + "Run `mitm-proxy ca regenerate --ca-dir \(files.directory)` and reinstall it on your devices.")
        }
        var keyInfo = stat()
        if stat(files.privateKey, &keyInfo) == 0, keyInfo.st_mode & 0o077 != 0 {
            chmod(files.privateKey, 0o600)
            notes.append("CA key \(files.privateKey) was readable by other users; restricted it to mode 0600")
        }
        if !FileStore.exists(files.certificateDER) {
            try FileStore.writeAtomically(certificate.der, to: files.certificateDER, mode: 0o644)
        }
        return CertificateAuthority(
            certificate: certificate, key: key, files: files, warnings: notes, wasCreated: false)
    }

    private static func create(files: CertificateAuthorityFiles, warnings: [String]) throws(CertificateAuthorityError)
        -> CertificateAuthority
    {
        let key: PrivateKey
        let certificate: X509Certificate
        do {
            key = try PrivateKey.generateP256()
            certificate = try CertificateAuthorityCertificate.make(key: key, now: Date())
        } catch {
            throw CertificateAuthorityError("cannot create a CA: \(error)")
        }
        let keyPEM: [UInt8]
        do { keyPEM = try key.pkcs8PEM() } catch {
            throw CertificateAuthorityError("cannot encode the CA key: \(error)")
        }
        // ca.pem is written last: its presence marks a complete CA.
        try FileStore.writeAtomically(keyPEM, to: files.privateKey, mode: 0o600)
        try FileStore.writeAtomically(certificate.der, to: files.certificateDER, mode: 0o644)
        try FileStore.writeAtomically(Array(certificate.pem.utf8), to: files.certificatePEM, mode: 0o644)
        return CertificateAuthority(
            certificate: certificate, key: key, files: files, warnings: warnings, wasCreated: true)
    }

    /// The CA certificate and key as a PKCS#12 that iOS and macOS import (3DES, SHA-1 MAC).
    public func applePKCS12(password: String) throws(TLSError) -> [UInt8] {
        guard let bundle = mitm_pkcs12_create_apple(password, "mitm-proxy CA", key.pointer, certificate.pointer) else {
            throw TLSError("building a PKCS#12 bundle")
        }
        defer { PKCS12_free(bundle) }
        guard let der = derEncoded({ i2d_PKCS12(bundle, $0) }) else { throw TLSError("encoding a PKCS#12 bundle") }
        return der
    }
}

/// The CA certificate recipe (DESIGN.md "Certificates").
enum CertificateAuthorityCertificate {
    static func make(key: PrivateKey, now: Date) throws(TLSError) -> X509Certificate {
        guard let raw = X509_new() else { throw TLSError("allocating a certificate") }
        let certificate = X509Certificate(taking: raw)
        guard X509_set_version(raw, 2) == 1 else { throw TLSError("setting certificate version") }
        try X509Extensions.setRandomSerial(raw)
        try X509Extensions.setValidity(
            raw, from: now.addingTimeInterval(-86_400), until: now.addingTimeInterval(10 * 365 * 86_400))
        let shortID = SHA256Digest.hex((try? key.subjectPublicKeyInfoDER()) ?? []).prefix(8)
        guard let name = X509_get_subject_name(raw) else { throw TLSError("reading the subject name") }
        try X509Extensions.setName(name, [("O", "mitm-proxy"), ("CN", "mitm-proxy CA \(shortID)")])
        guard X509_set_issuer_name(raw, name) == 1, X509_set_pubkey(raw, key.pointer) == 1 else {
            throw TLSError("setting issuer and public key")
        }
        for (nid, value) in [
            (NID_basic_constraints, "critical,CA:TRUE,pathlen:0" as StaticString),
            (NID_key_usage, "critical,keyCertSign,cRLSign"),
            (NID_subject_key_identifier, "hash"),
        ] {
            let extensionPointer = try X509Extensions.make(nid, value, issuer: raw, subject: raw)
            defer { X509_EXTENSION_free(extensionPointer) }
            try X509Extensions.add(extensionPointer, to: raw)
        }
        guard X509_sign(raw, key.pointer, EVP_sha256()) > 0 else { throw TLSError("signing the CA certificate") }
        return certificate
    }
}
