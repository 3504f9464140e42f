/// What the proxy presents in one client handshake: a certificate, the chain certificates sent after it, and its key.
public struct ForgedIdentity: Sendable {
    /// The leaf.
    public let certificate: X509Certificate
    /// Certificates sent after the leaf (an intermediate), usually none.
    public let chain: [X509Certificate]
    /// The leaf's private key.
    public let key: PrivateKey
    /// The pin of the key shown: base64 SHA-256 of the leaf's SPKI (computed once, read per handshake).
    public let pin: String

    /// An identity of `certificate` with `key`, sending `chain` after it; `pin` when the caller already knows it.
    public init(certificate: X509Certificate, chain: [X509Certificate] = [], key: PrivateKey, pin: String? = nil) {
        self.certificate = certificate
        self.chain = chain
        self.key = key
        self.pin = pin ?? certificate.spkiSHA256Base64
    }
}
