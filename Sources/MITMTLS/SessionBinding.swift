import COpenSSL

/// What a server-side TLS session is bound to (OpenSSL's session ID context): the host the client asked for and the
/// certificates it was shown. OpenSSL resumes a session, by ID or by ticket, in TLS 1.2 and 1.3, only on a connection
/// with the same context, and does a full handshake otherwise. So a session never resumes on another host (RFC 6066 §3,
/// RFC 8446 §4.6.1) nor under another certificate (another audit profile, a re-forged leaf), and a resumed connection's
/// certificate was accepted in an earlier full handshake for the same host.
enum SessionBinding {
    /// The context for `host` shown `certificates` (leaf first): 32 bytes, OpenSSL's limit.
    static func context(host: String, certificates: [X509Certificate]) -> [UInt8] {
        var input = Array(host.utf8)
        input.append(0)
        var fingerprint = [UInt8](repeating: 0, count: 64)
        for certificate in certificates {
            var length: UInt32 = 0
            // SHA-1: OpenSSL keeps each certificate's SHA-1 fingerprint, so this copies it instead of hashing the DER.
            if X509_digest(certificate.pointer, EVP_sha1(), &fingerprint, &length) == 1 {
                input += fingerprint[0..<Int(length)]
            } else {
                input += certificate.der
            }
        }
        return SHA256Digest.hash(input)
    }
}
