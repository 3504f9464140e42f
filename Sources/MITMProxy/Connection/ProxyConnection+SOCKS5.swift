import MITMCore

/// SOCKS5 on the proxy's port: the handshake up to CONNECT, then the same tunnel as an HTTP CONNECT.
extension ProxyConnection {
    /// Whether a connection's first bytes are a SOCKS5 greeting (an HTTP request starts with a letter).
    func startsSOCKS5(_ bytes: UnsafeRawBufferPointer) -> Bool {
        !webUIOnly && parser.isIdle && bytes.first == SOCKS5Handshake.version
    }

    /// A SOCKS4 or SOCKS4a request (version byte 4), which no HTTP request starts with.
    func startsSOCKS4(_ bytes: UnsafeRawBufferPointer) -> Bool {
        !webUIOnly && parser.isIdle && bytes.first == 4
    }

    /// Answers a SOCKS4 client at once, with SOCKS4's "request rejected", instead of leaving it to the handshake timeout.
    func refuseSOCKS4() {
        clientSocket.write([0, 0x5B, 0, 0, 0, 0, 0, 0])
        context.events.emit(
            .badRequest(
                connectionID: id, peer: clientSocket.peerDescription,
                reason: "SOCKS4 is not supported: use SOCKS5 (socks5h://HOST:PORT) or this proxy as an HTTP proxy"))
        closeAfterLastBytes()
    }

    func readSOCKS5(_ handshake: SOCKS5Handshake, _ bytes: [UInt8]) {
        var handshake = handshake
        let actions = handshake.receive(bytes)
        receive(.socksProgressed(handshake))
        performSOCKS5(actions)
    }

    private func performSOCKS5(_ actions: [SOCKS5Handshake.Action]) {
        for action in actions {
            guard case .negotiatingSOCKS(var handshake, _) = life.state else { return }
            switch action {
            case .send(let bytes):
                clientSocket.write(bytes)
            case .checkCredentials(let user, let password):
                let accepted = context.configuration.proxyCredentials?.accepts(user: user, password: password) ?? true
                let next = handshake.credentialsChecked(accepted)
                receive(.socksProgressed(handshake))
                performSOCKS5(next)
            case .connect(let host, let port):
                let leftover = handshake.takeBuffered()
                openTunnel(host: host, port: port, request: .socks5, asksForPins: false, leftover: leftover)
            case .fail(let reason):
                context.events.emit(.badRequest(connectionID: id, peer: clientSocket.peerDescription, reason: reason))
                closeAfterLastBytes()
            }
        }
    }

    /// Refuses a tunnel before it opens: an HTTP error for CONNECT, a SOCKS5 reply (not allowed) for SOCKS5.
    func refuse(_ request: TunnelRequest, status: Int, reason: String) {
        switch request {
        case .httpConnect:
            reject(status: status, reason: reason)
        case .socks5:
            context.events.emit(
                .badRequest(connectionID: id, peer: clientSocket.peerDescription, reason: "SOCKS5 CONNECT: \(reason)"))
            clientSocket.write(SOCKS5Handshake.reply(.notAllowed))
            closeAfterLastBytes()
        case .reverse, .transparent:
            let mode = request == .reverse ? "reverse proxy" : "transparent"
            context.events.emit(
                .badRequest(connectionID: id, peer: clientSocket.peerDescription, reason: "\(mode): \(reason)"))
            close(reason: reason)
        }
    }
}
