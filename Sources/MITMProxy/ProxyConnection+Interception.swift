import Foundation
import MITMCore
import MITMHTTP2
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

    /// How an HTTP/2 upstream connection for this client would have been opened.
    func http2PoolKey() -> UpstreamPoolKey {
        let host = interceptHost
        return UpstreamPoolKey(host: connectHost, port: connectPort, serverName: HostName.isIPAddress(host) ? nil : host,
                               alpn: "h2", verifiesCertificate: !context.configuration.upstreamInsecure)
    }

    /// A pooled HTTP/2 connection this client can share: it offered h2, sent a valid name (or none), and a
    /// connection opened the same way has room for more streams.
    func sharedHTTP2Upstream(for hello: ClientHello) -> SharedHTTP2Upstream? {
        guard upstreamALPN(for: hello.alpnProtocols).contains("h2"),
              hello.serverName.map({ HostName.validate($0) != nil }) ?? true else { return nil }
        return context.pool(for: loop).sharedHTTP2(for: http2PoolKey())
    }

    /// Intercepts over a pooled HTTP/2 connection that other clients of the origin use too.
    func interceptSharing(_ shared: SharedHTTP2Upstream) {
        sharedUpstream = shared
        upstreamCertificate = shared.certificate
        reusedUpstreamAddress = shared.address
        startClientHandshake(names: ForgeNames.names(primary: interceptHost, upstream: shared.certificate), upstreamFailure: nil)
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
        guard !isClosed else { return }
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
        expect(.clientHandshake(host: interceptHost), within: context.configuration.handshakeTimeout)
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
        context.events.emit(.intercepted(connectionID: id, host: interceptHost, port: connectPort,
                                         tlsVersion: leg.tls.protocolVersion, alpn: leg.tls.negotiatedALPN))
        if probe == .trust {
            let relay = HTTPRelay(connectionID: id, context: context, loop: loop, client: leg, parser: HTTP1Parser(role: .request), mode: .plain)
            startRelaying(.http1(relay))
            relay.start()
            return
        }
        // One decision for both protocols: the upstream, or a 502 naming why there is none.
        let upstream = upstreamFailure == nil ? upstreamLeg : nil
        let failure = upstreamFailure ?? "no upstream connection"
        if leg.tls.negotiatedALPN == "h2" {
            let relay: HTTP2Relay
            let fresh = sharedUpstream == nil
            let connection: SharedHTTP2Upstream?
            do {
                connection = upstreamFailure == nil ? try http2Upstream() : nil
                relay = try HTTP2Relay(connectionID: id, context: context, client: leg, mode: connection.map {
                    .intercepted(host: interceptHost, port: connectPort, upstream: $0)
                } ?? .failing(host: interceptHost, port: connectPort, reason: failure))
            } catch {
                if fresh { sharedUpstream?.stop() }
                close(reason: "cannot start HTTP/2: \(error)")
                return
            }
            connection?.join(context.pool(for: loop))
            relay.newConnectionTimings = upstreamConnectionTimings
            startRelaying(.http2(relay))
            relay.start()
            return
        }
        let relay = HTTPRelay(connectionID: id, context: context, loop: loop, client: leg, parser: HTTP1Parser(role: .request),
                              mode: upstream.map { .intercepted(host: interceptHost, port: connectPort, upstream: $0) }
                                  ?? .failing(host: interceptHost, port: connectPort, reason: failure))
        relay.newConnectionTimings = upstreamConnectionTimings
        startRelaying(.http1(relay))
        relay.start()
    }

    /// The HTTP/2 upstream connection for this client's streams: the shared one it was given, or one made of its
    /// own new upstream (which joins the pool for later clients of the origin once its relay runs).
    func http2Upstream() throws(HTTP2SessionError) -> SharedHTTP2Upstream? {
        if let sharedUpstream { return sharedUpstream }
        guard let upstreamLeg else { return nil }
        let address: String
        if case .connected(let connection) = upstream { address = connection.address } else { address = reusedUpstreamAddress ?? "" }
        let shared = try SharedHTTP2Upstream(key: http2PoolKey(), leg: upstreamLeg, certificate: upstreamCertificate,
                                             address: address, loop: loop)
        self.upstreamLeg = nil  // the shared connection owns it now
        sharedUpstream = shared
        return shared
    }

    /// What reaching the upstream cost, for the first exchange's HAR timings (a pooled upstream cost nothing).
    var upstreamConnectionTimings: UpstreamConnectionTimings? {
        if case .connected(let connection) = upstream {
            return UpstreamConnectionTimings(dns: connection.dnsMilliseconds, connect: connection.connectMilliseconds,
                                             ssl: upstreamHandshakeMilliseconds, address: connection.address)
        }
        return reusedUpstreamAddress.map { UpstreamConnectionTimings(dns: -1, connect: -1, ssl: -1, address: $0) }
    }

    /// The relay is done with an idle, healthy upstream: park it for the next client of the origin, opened
    /// the same way (SNI and ALPN), or close it.
    func relayReleasedUpstream(_ leg: Leg) {
        guard let tlsLeg = leg as? TLSLeg, tlsLeg === upstreamLeg, let hello = clientHello else {
            leg.close()
            return
        }
        let address: String
        if case .connected(let connection) = upstream { address = connection.address } else { address = reusedUpstreamAddress ?? "" }
        upstreamLeg = nil
        upstream = .none
        context.pool(for: loop).park(PooledUpstream(
            leg: tlsLeg, host: connectHost, port: connectPort, serverName: HostName.isIPAddress(interceptHost) ? nil : interceptHost,
            certificate: upstreamCertificate, address: address, offeredALPN: upstreamALPN(for: hello.alpnProtocols)))
    }

    /// ALPN for the client: exactly what the upstream chose, or the client's own choice when no upstream answered.
    func clientALPNOffer(upstreamFailed: Bool) -> [String] {
        if probe == .trust { return ["http/1.1"] }
        if sharedUpstream != nil { return ["h2"] }
        guard !upstreamFailed, let upstreamLeg else {
            return ALPNPolicy.clientOfferWithoutUpstream(clientOffered: clientHello?.alpnProtocols ?? [])
        }
        return ALPNPolicy.clientOffer(upstreamChose: upstreamLeg.tls.negotiatedALPN)
    }
}
