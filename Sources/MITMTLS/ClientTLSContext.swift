import CMITMTLSShims
import COpenSSL

/// The `SSL_CTX` for upstream (client-role) connections: verifies against the system store plus
/// extra CA files, unless verification is turned off.
// @unchecked Sendable: configured once in init; OpenSSL contexts are safe to share across threads.
public final class ClientTLSContext: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Whether upstream certificates are verified.
    public let verifies: Bool
    let sessions = TLSSessionCache()

    /// Creates the upstream context. Each `extraCAFiles` entry must be a readable PEM with certificates.
    public init(verify: Bool, extraCAFiles: [String]) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSError("creating a client TLS context") }
        pointer = context
        verifies = verify
        guard mitm_ssl_ctx_configure_client(context) == 1 else { throw TLSError("configuring the client TLS context") }
        SSL_CTX_sess_set_new_cb(context, rememberSession)
        guard verify else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            return
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if SSL_CTX_set_default_verify_paths(context) != 1 { _ = OpenSSLErrorStack.drain() }
        for file in extraCAFiles {
            guard SSL_CTX_load_verify_locations(context, file, nil) == 1 else {
                throw TLSError(
                    "loading upstream CA file \(file) (it must be a readable PEM file with at least one certificate)")
            }
        }
    }

    /// A context that accepts any chain, weak keys included (security level 0): for reading what a
    /// server presents (`mitm-proxy pins --connect`), never for relaying traffic.
    public static func chainReader() throws(TLSError) -> ClientTLSContext {
        let context = try ClientTLSContext(verify: false, extraCAFiles: [])
        SSL_CTX_set_security_level(context.pointer, 0)
        return context
    }

    deinit { SSL_CTX_free(pointer) }
}

/// OpenSSL's new-session callback: keeps the session for the connection's upstream key.
private func rememberSession(ssl: OpaquePointer?, session: OpaquePointer?) -> Int32 {
    guard let ssl, let session, let connection = TLSConnection.owner(of: ssl), let cache = connection.sessionCache,
        let key = connection.sessionKey
    else { return 0 }
    cache.store(TLSSessionBox(taking: session), for: key)
    return 1
}
