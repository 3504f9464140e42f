import MITMTLS

/// A TLS client handshake over memory BIOs that keeps whatever chain the server presents.
///
/// Verification is off on purpose: the point is to read the chain, including chains no store
/// trusts. The security level is 0 so that weak or old keys can be read too.
enum TLSChainClient {
    /// Runs a handshake on `socket`, starting with `pending` bytes already received, and returns
    /// the server's chain, leaf first.
    static func handshake(on socket: TCPClientSocket, serverName: String?, pending: [UInt8]) throws(PinsError)
        -> [X509Certificate]
    {
        let stage = "during the TLS handshake"
        let tls: TLSConnection
        do {
            tls = try TLSConnection(
                client: try ClientTLSContext.chainReader(), serverName: serverName,
                verifyName: serverName ?? "", alpn: [])
        } catch {
            throw PinsError("cannot start TLS with \(socket.name): \(error)")
        }
        if !pending.isEmpty { tls.receive(pending) }
        handshaking: while true {
            let step = tls.handshake()
            let outgoing = tls.takeOutput()
            if !outgoing.isEmpty { try socket.sendAll(outgoing, stage: stage) }
            switch step {
            case .complete:
                break handshaking
            case .needsInput:
                let incoming = try socket.receive(stage: stage)
                guard !incoming.isEmpty else {
                    throw PinsError(
                        "\(socket.name) did not complete a TLS handshake: it closed the connection (is it a TLS port?)")
                }
                tls.receive(incoming)
            case .failed(let failure):
                throw PinsError("\(socket.name) did not complete a TLS handshake: \(describe(failure.reason))")
            }
        }
        let chain = tls.peerCertificates
        guard !chain.isEmpty else {
            throw PinsError("\(socket.name) completed a TLS handshake without presenting a certificate")
        }
        return chain
    }

    private static func describe(_ reason: String) -> String {
        if reason.contains("wrong version number") || reason.contains("packet length too long")
            || reason.contains("record layer failure")
        {
            return "\(reason) (the server did not answer in TLS: is it a plain-text port?)"
        }
        return reason
    }
}
