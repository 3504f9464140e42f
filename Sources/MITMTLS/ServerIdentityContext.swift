import CMITMTLSShims
import COpenSSL

/// One server-role `SSL_CTX` with the server configuration and, but for the base one, a certificate, its key and
/// its chain installed. Holds the objects it was made from, so their identities stay unique while it lives.
// @unchecked Sendable: configured once in init, read-only afterwards (OpenSSL contexts are safe to share).
final class ServerIdentityContext: @unchecked Sendable {
    let pointer: OpaquePointer
    private let presented: Identity?

    /// Which certificate, key and chain a context presents (compared by object).
    struct Identity: Hashable, Sendable {
        let certificate: X509Certificate
        let key: PrivateKey
        let chain: [X509Certificate]

        static func == (lhs: Identity, rhs: Identity) -> Bool {
            lhs.certificate === rhs.certificate && lhs.key === rhs.key && lhs.chain.elementsEqual(rhs.chain, by: ===)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(certificate))
            hasher.combine(ObjectIdentifier(key))
            for link in chain { hasher.combine(ObjectIdentifier(link)) }
        }
    }

    /// A context with the server configuration, issuing tickets with `ticketKeys`' keys (its own when nil),
    /// presenting `identity` when given.
    init(sharingTicketKeysOf ticketKeys: ServerIdentityContext?, presenting identity: Identity?) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError("creating a server TLS context") }
        pointer = context
        presented = identity
        guard mitm_ssl_ctx_configure_server(context) == 1 else { throw TLSError("configuring the server TLS context") }
        SSL_CTX_set_alpn_select_cb(context, selectALPN, nil)
        if let ticketKeys, mitm_ssl_ctx_share_ticket_keys(context, ticketKeys.pointer) != 1 {
            throw TLSError("sharing the session ticket keys")
        }
        guard let identity else { return }
        guard SSL_CTX_use_certificate(context, identity.certificate.pointer) == 1,
            SSL_CTX_use_PrivateKey(context, identity.key.pointer) == 1
        else {
            throw TLSError("installing the forged certificate")
        }
        for intermediate in identity.chain where mitm_ssl_ctx_add1_chain_cert(context, intermediate.pointer) != 1 {
            throw TLSError("adding an intermediate certificate")
        }
    }

    deinit { SSL_CTX_free(pointer) }
}
