import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// Interception of a TLS tunnel: the upstream handshake (or a pooled upstream), the forged certificate,
/// the client handshake and its verdict, and the HTTP/1.1 or HTTP/2 relay that follows.
extension ProxyConnection {
    /// The name the client asked for: its SNI, or the CONNECT host when it sent none.
    var interceptHost: String {
        if let name = clientHello?.serverName, let valid = HostName.validate(name) { return valid }
        return connectHost
    }

    /// Intercepts over an idle pooled upstream when it was opened the same way this client asks.
    func interceptReusing(_ entry: PooledUpstream, hello: ClientHello) {
        let host = interceptHost
        let serverName = HostName.isIPAddress(host) ? nil : host
        guard entry.serverName == serverName, entry.offeredALPN == upstreamALPN(for: hello.alpnProtocols),
              hello.serverName.map({ HostName.validate($0) != nil }) ?? true else {
            entry.leg.close()
            startConnecting()
            return
        }
        upstreamLeg = entry.leg
        upstreamCertificate = entry.certificate
        reusedUpstreamAddress = entry.address
        startClientHandshake(names: ForgeNames.names(primary: host, upstream: entry.certificate), upstreamFailure: nil)
    }

    func intercept(_ hello: ClientHello, upstream: Result<UpstreamConnection, UpstreamFailure>) {
        if let name = hello.serverName, HostName.validate(name) == nil {
            verdict?.observe(.handshakeFailed("invalid server name (SNI)"))
            context.events.emit(.clientTLSFailed(connectionID: id, host: connectHost, port: connectPort,
                                                 reason: "the client sent an invalid server name (SNI) \"\(name.prefix(80))\""))
            close(reason: "invalid SNI")
            return
        }
        let host = interceptHost
        switch upstream {
        case .failure(let failure):
            upstreamFailedBeforeForging(failure.reason)
        case .success(let connection):
            let socket = connection.socket
            timeoutWhat = "the TLS handshake with \(host):\(connectPort)"
            upstreamHandshakeStarted = Date()
            let tls: TLSConnection
            do {
                tls = try TLSConnection(client: context.upstreamTLS, serverName: HostName.isIPAddress(host) ? nil : host,
                                        verifyName: host, port: connectPort, alpn: upstreamALPN(for: hello.alpnProtocols))
            } catch {
                socket.close()
                upstreamFailedBeforeForging("cannot start TLS: \(error)")
                return
            }
            let leg = TLSLeg(socket: socket, tls: tls)
            upstreamLeg = leg
            leg.onHandshake = { [unowned self, unowned leg] outcome in
                switch outcome {
                case .complete:
                    upstreamHandshakeMilliseconds = Date().timeIntervalSince(upstreamHandshakeStarted) * 1000
                    upstreamCertificate = leg.tls.peerCertificates.first
                    // An h2 upstream speaks first (SETTINGS): hold its bytes until a relay takes them.
                    leg.pauseReading()
                    startClientHandshake(names: ForgeNames.names(primary: host, upstream: upstreamCertificate),
                                         upstreamFailure: nil)
                case .failed(let failure):
                    leg.close()
                    upstreamLeg = nil
                    upstreamFailedBeforeForging(Self.describeUpstream(failure))
                case .peerClosed:
                    leg.close()
                    upstreamLeg = nil
                    upstreamFailedBeforeForging("closed the connection during the TLS handshake")
                }
            }
            leg.startHandshake()
        }
    }

    /// `https://mitm.proxy/`: the proxy's own pages over TLS with a forged certificate, so that a client
    /// that loads them proves it trusts the CA.
    func answerTrustProbe() {
        startClientHandshake(names: [ForgeNames.name(for: LocalPages.host)], upstreamFailure: nil)
    }

    static func describeUpstream(_ failure: TLSFailure) -> String {
        if let verifyError = failure.verifyError { return "its certificate is not trusted: \(verifyError)" }
        if let alert = failure.receivedAlert { return "TLS handshake failed: it sent alert \(alert.name)" }
        return "TLS handshake failed: \(failure.reason)"
    }

    func upstreamFailedBeforeForging(_ reason: String) {
        context.events.emit(.upstreamFailed(connectionID: id, host: interceptHost, port: connectPort, reason: reason))
        startClientHandshake(names: [ForgeNames.name(for: interceptHost)], upstreamFailure: reason)
    }

    func startClientHandshake(names: [SubjectAlternativeName], upstreamFailure: String?) {
        guard phase != .closed else { return }
        let tls: TLSConnection
        do {
            let identity = try context.profiles.identity(for: verdict?.profile ?? .trusted, names: names)
            verdict?.shownCertificatePin = identity.pin
            tls = try TLSConnection(server: context.serverTLS, certificate: identity.certificate, key: identity.key,
                                    chain: identity.chain, alpn: clientALPNOffer(upstreamFailed: upstreamFailure != nil))
        } catch {
            context.events.emit(.clientTLSFailed(connectionID: id, host: interceptHost, port: connectPort, reason: "cannot forge a certificate: \(error)"))
            close(reason: "forging failed")
            return
        }
        timeoutWhat = "the client's TLS handshake for \(interceptHost)"
        deadline = Clock.after(seconds: context.configuration.handshakeTimeout)
        let leg = TLSLeg(socket: clientSocket, tls: tls)
        clientLeg = leg
        leg.onHandshake = { [unowned self, unowned leg] outcome in
            if leg.tls.certificateSent { verdict?.observe(.certificateSent) }
            switch outcome {
            case .complete:
                verdict?.handshakeCompleted(leg, loop: loop)
                clientHandshakeCompleted(leg, upstreamFailure: upstreamFailure)
            case .failed(let failure):
                if let alert = failure.receivedAlert {
                    verdict?.observe(.alertReceived(alert))
                } else {
                    verdict?.observe(.handshakeFailed(failure.reason))
                }
                context.events.emit(.clientTLSFailed(connectionID: id, host: interceptHost, port: connectPort,
                                                     reason: Self.describeClient(failure)))
                close(reason: "client TLS handshake failed")
            case .peerClosed(let reset):
                verdict?.observe(.peerClosed(reset: reset))
                let how = reset ? "reset the connection" : "closed the connection"
                let when = leg.tls.certificateSent ? "after receiving the certificate" : "before the certificate was sent"
                context.events.emit(.clientTLSFailed(connectionID: id, host: interceptHost, port: connectPort,
                                                     reason: "the client \(how) during the TLS handshake, \(when), without an alert"))
                close(reason: "client left during the handshake")
            }
        }
        leg.onFirstData = { [unowned self] in verdict?.observe(.applicationData) }
        leg.onInputEnd = { [unowned self] alert, reset in
            if let alert {
                verdict?.observe(.alertReceived(alert))
            } else {
                verdict?.observe(.peerClosed(reset: reset))
            }
        }
        let hello = peeked
        peeked = []
        leg.startHandshake(initialBytes: hello)
    }

    static func describeClient(_ failure: TLSFailure) -> String {
        if let alert = failure.receivedAlert {
            return alert.rejectsCertificate
                ? "the client rejected the certificate: alert \(alert.name)"
                : "the client aborted the handshake: alert \(alert.name)"
        }
        return "the TLS handshake failed: \(failure.reason)"
    }

    func clientHandshakeCompleted(_ leg: TLSLeg, upstreamFailure: String?) {
        phase = .relaying
        touch()
        context.events.emit(.intercepted(connectionID: id, host: interceptHost, port: connectPort,
                                         tlsVersion: leg.tls.protocolVersion, alpn: leg.tls.negotiatedALPN))
        if probe == .trust {
            let relay = HTTPRelay(connectionID: id, context: context, loop: loop, client: leg, parser: HTTP1Parser(role: .request), mode: .plain)
            adopt(relay)
            relay.start()
            return
        }
        if leg.tls.negotiatedALPN == "h2" {
            startHTTP2Relay(client: leg, upstreamFailure: upstreamFailure)
            return
        }
        let mode: HTTPRelay.Mode
        if let upstreamLeg, upstreamFailure == nil {
            mode = .intercepted(host: interceptHost, port: connectPort, upstream: upstreamLeg)
        } else {
            mode = .failing(host: interceptHost, port: connectPort, reason: upstreamFailure ?? "no upstream connection")
        }
        let relay = HTTPRelay(connectionID: id, context: context, loop: loop, client: leg,
                              parser: HTTP1Parser(role: .request), mode: mode)
        if case .success(let connection)? = upstreamResult {
            relay.newConnectionTimings = UpstreamConnectionTimings(
                dns: connection.dnsMilliseconds, connect: connection.connectMilliseconds,
                ssl: upstreamHandshakeMilliseconds, address: connection.address)
        } else if let reusedUpstreamAddress {
            relay.newConnectionTimings = UpstreamConnectionTimings(dns: -1, connect: -1, ssl: -1, address: reusedUpstreamAddress)
        }
        if upstreamFailure == nil, let hello = clientHello { offerUpstreamReuse(from: relay, hello: hello) }
        adopt(relay)
        relay.start()
    }

    /// Lets the relay hand back an idle upstream when the client leaves, for the next client of the origin.
    func offerUpstreamReuse(from relay: HTTPRelay, hello: ClientHello) {
        let offered = upstreamALPN(for: hello.alpnProtocols)
        let host = interceptHost
        relay.onUpstreamReusable = { [unowned self] leg in
            guard let tlsLeg = leg as? TLSLeg, tlsLeg === upstreamLeg else {
                leg.close()
                return
            }
            let address: String
            if case .success(let connection)? = upstreamResult { address = connection.address } else { address = reusedUpstreamAddress ?? "" }
            upstreamLeg = nil
            upstreamResult = nil
            context.pool(for: loop).park(PooledUpstream(
                leg: tlsLeg, host: connectHost, port: connectPort, serverName: HostName.isIPAddress(host) ? nil : host,
                certificate: upstreamCertificate, address: address, offeredALPN: offered))
        }
    }

    /// ALPN for the client: exactly what the upstream chose, or the client's own choice when no upstream answered.
    func clientALPNOffer(upstreamFailed: Bool) -> [String] {
        if probe == .trust { return ["http/1.1"] }
        guard !upstreamFailed, let upstreamLeg else {
            return ALPNPolicy.clientOfferWithoutUpstream(clientOffered: clientHello?.alpnProtocols ?? [])
        }
        return ALPNPolicy.clientOffer(upstreamChose: upstreamLeg.tls.negotiatedALPN)
    }

    func startHTTP2Relay(client leg: TLSLeg, upstreamFailure: String?) {
        let mode: HTTP2Relay.Mode
        if let upstreamLeg, upstreamFailure == nil {
            mode = .intercepted(host: interceptHost, port: connectPort, upstream: upstreamLeg)
        } else {
            mode = .failing(host: interceptHost, port: connectPort, reason: upstreamFailure ?? "no upstream connection")
        }
        let relay: HTTP2Relay
        do {
            relay = try HTTP2Relay(connectionID: id, context: context, client: leg, mode: mode)
        } catch {
            close(reason: "cannot start HTTP/2: \(error)")
            return
        }
        if case .success(let connection)? = upstreamResult {
            relay.newConnectionTimings = UpstreamConnectionTimings(
                dns: connection.dnsMilliseconds, connect: connection.connectMilliseconds,
                ssl: upstreamHandshakeMilliseconds, address: connection.address)
        }
        http2Relay = relay
        relay.onActivity = { [unowned self] in touch() }
        relay.onLinger = { [unowned self] in deadline = Clock.after(seconds: 2) }
        relay.onClose = { [unowned self] _ in finished() }
        relay.start()
    }
}
