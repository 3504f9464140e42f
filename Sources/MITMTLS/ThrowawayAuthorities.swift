import FoundationEssentials
import Glibc

/// The keys and CAs behind the invalid certificate profiles: EC P-256, made once per proxy run, kept in memory
/// only (never written to the CA directory or anywhere else).
final class ThrowawayAuthorities: Sendable {
    /// A root no client has seen (`untrusted-root`).
    let untrustedRoot: X509Certificate
    let untrustedRootKey: PrivateKey
    /// Signs leaves under the proxy CA's own name and key identifier (`same-name-ca`).
    let impostorKey: PrivateKey
    /// An ordinary leaf issued by the proxy CA (`CA:FALSE`) that signs the `leaf-as-ca` leaves, under the CA's own name.
    let nonCAIntermediate: X509Certificate
    let nonCAIntermediateKey: PrivateKey

    init(authority: CertificateAuthority, now: Date) throws(TLSError) {
        untrustedRootKey = try PrivateKey.generateP256()
        let rootID = SHA256Digest.hex(try untrustedRootKey.subjectPublicKeyInfoDER()).prefix(8)
        untrustedRoot = try CertificateRecipe.authority(
            name: "mitm-proxy untrusted-root CA \(rootID)", key: untrustedRootKey, now: now
        ).sign()
        impostorKey = try PrivateKey.generateP256()
        nonCAIntermediateKey = try PrivateKey.generateP256()
        // No keyUsage (which allows every usage): CA:FALSE is the one thing that forbids it to sign.
        var intermediate = CertificateRecipe.leaf(
            names: [.dns("leaf-as-ca.mitm-proxy.invalid")], key: nonCAIntermediateKey, issuer: authority.certificate,
            signingKey: authority.key, notBefore: now.addingTimeInterval(-86_400),
            notAfter: now.addingTimeInterval(365 * 86_400))
        intermediate.keyUsage = nil
        intermediate.subjectKeyIdentifier = true
        // Named like the proxy CA, so it is self-issued: RFC 5280 §6.1.4 (l) does not count it against the CA's
        // pathlen:0, which would otherwise fail too ("path length constraint exceeded"). Its key identifier, in the
        // leaf's authority key identifier, still tells verifiers it (not the CA) issued the leaf.
        intermediate.subjectIsIssuerName = true
        nonCAIntermediate = try intermediate.sign()
    }
}
