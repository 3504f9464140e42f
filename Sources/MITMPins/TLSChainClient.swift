import COpenSSL
import CMITMShims
import MITMTLS

/// A TLS client handshake over memory BIOs that keeps whatever chain the server presents.
///
/// Verification is off on purpose: the point is to read the chain, including chains no store
/// trusts. The security level is 0 so that weak or old keys can be read too.
enum TLSChainClient {
    /// Runs a handshake on `socket`, starting with `pending` bytes already received, and returns
    /// the server's chain, leaf first.
    static func handshake(on socket: TCPClientSocket, serverName: String?, pending: [UInt8]) throws(PinsError) -> [X509Certificate] {
        let session = try Session(serverName: serverName, server: socket.name)
        let stage = "during the TLS handshake"
        if !pending.isEmpty { session.feed(pending) }
        while true {
            ERR_clear_error()
            let result = SSL_do_handshake(session.ssl)
            let error = SSL_get_error(session.ssl, result)
            let stack = OpenSSLErrorStack.drain()
            let outgoing = session.drainOutgoing()
            if !outgoing.isEmpty { try socket.sendAll(outgoing, stage: stage) }
            if result == 1 { break }
            switch error {
            case SSL_ERROR_WANT_READ:
                let incoming = try socket.receive(stage: stage)
                guard !incoming.isEmpty else {
                    throw PinsError("\(socket.name) did not complete a TLS handshake: it closed the connection (is it a TLS port?)")
                }
                session.feed(incoming)
            case SSL_ERROR_WANT_WRITE:
                continue
            default:
                throw PinsError("\(socket.name) did not complete a TLS handshake: \(describe(stack))")
            }
        }
        let chain = session.peerChain()
        guard !chain.isEmpty else { throw PinsError("\(socket.name) completed a TLS handshake without presenting a certificate") }
        return chain
    }

    private static func describe(_ stack: OpenSSLErrorStack) -> String {
        let reason = stack.reason
        if reason.contains("wrong version number") || reason.contains("packet length too long") || reason.contains("record layer failure") {
            return "\(reason) (the server did not answer in TLS: is it a plain-text port?)"
        }
        return reason
    }

    /// One `SSL` object with its memory BIOs.
    private final class Session {
        private let context: OpaquePointer
        let ssl: OpaquePointer
        private let input: OpaquePointer
        private let output: OpaquePointer

        init(serverName: String?, server: String) throws(PinsError) {
            guard let context = SSL_CTX_new(TLS_client_method()) else {
                throw PinsError("cannot create a TLS context for \(server): \(OpenSSLErrorStack.drain().reason)")
            }
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            SSL_CTX_set_security_level(context, 0)
            guard let ssl = SSL_new(context) else {
                SSL_CTX_free(context)
                throw PinsError("cannot create a TLS connection for \(server): \(OpenSSLErrorStack.drain().reason)")
            }
            let newInput = BIO_new(BIO_s_mem())
            let newOutput = BIO_new(BIO_s_mem())
            guard let input = newInput, let output = newOutput else {
                _ = newInput.map(BIO_free)
                _ = newOutput.map(BIO_free)
                SSL_free(ssl)
                SSL_CTX_free(context)
                throw PinsError("cannot create memory BIOs for \(server)")
            }
            self.context = context
            self.ssl = ssl
            self.input = input
            self.output = output
            SSL_set_bio(ssl, input, output)
            SSL_set_connect_state(ssl)
            if let serverName, mitm_ssl_set_host_name(ssl, serverName) != 1 {
                throw PinsError("cannot send \(serverName) as the TLS server name: \(OpenSSLErrorStack.drain().reason)")
            }
        }

        deinit {
            SSL_free(ssl)
            SSL_CTX_free(context)
        }

        func feed(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
        }

        func drainOutgoing() -> [UInt8] {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while BIO_ctrl_pending(output) > 0 {
                let count = buffer.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
                guard count > 0 else { break }
                bytes += buffer[0..<Int(count)]
            }
            return bytes
        }

        /// The presented certificates, each with its own reference.
        func peerChain() -> [X509Certificate] {
            guard let stack = SSL_get_peer_cert_chain(ssl) else { return [] }
            return (0..<OPENSSL_sk_num(stack)).compactMap { index in
                guard let raw = OPENSSL_sk_value(stack, index) else { return nil }
                let certificate = OpaquePointer(raw)
                X509_up_ref(certificate)
                return X509Certificate(taking: certificate)
            }
        }
    }
}
