import COpenSSL
import CMITMShims

/// The `SSL_CTX` for client-facing (server-role) connections: TLS 1.2+, ATS-compatible suites,
/// ALPN chosen per connection from `TLSConnection.offeredALPN`.
// @unchecked Sendable: configured once in init; OpenSSL contexts are safe to share across threads.
public final class ServerTLSContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Creates the shared server context.
    public init() throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError("creating a server TLS context") }
        pointer = context
        guard mitm_ssl_ctx_configure_server(context) == 1 else { throw TLSError("configuring the server TLS context") }
        SSL_CTX_set_alpn_select_cb(context, selectALPN, nil)
    }

    deinit { SSL_CTX_free(pointer) }
}

/// Picks the first protocol the connection allows, in the connection's preference order, that the client offered.
private func selectALPN(
    ssl: OpaquePointer?,
    output: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    outputLength: UnsafeMutablePointer<UInt8>?,
    input: UnsafePointer<UInt8>?,
    inputLength: UInt32,
    argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let ssl, let input, let output, let outputLength,
          let connection = TLSConnection.owner(of: ssl) else { return SSL_TLSEXT_ERR_NOACK }
    let offered = UnsafeBufferPointer(start: input, count: Int(inputLength))
    for wanted in connection.offeredALPN {
        var index = 0
        while index < offered.count {
            let length = Int(offered[index])
            let start = index + 1
            guard start + length <= offered.count else { break }
            if offered[start..<start + length].elementsEqual(wanted.utf8) {
                output.pointee = input + start
                outputLength.pointee = UInt8(length)
                return SSL_TLSEXT_ERR_OK
            }
            index = start + length
        }
    }
    return SSL_TLSEXT_ERR_NOACK
}
