import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// Interception of a TLS tunnel: the upstream handshake (or a pooled upstream), the forged certificate,
/// the client handshake and its verdict, and the HTTP/1.1 or HTTP/2 relay that follows.
extension ProxyConnection {
    /// Starts intercepting `tunnel`, whose client sent `hello`, showing a certificate of `profile`.
    func intercept(_ tunnel: Tunnel, _ hello: ClientHello, profile: CertificateProfile) {
        let verdict = VerdictTracker(
            context: context, connectionID: id, host: Interception.host(of: tunnel, hello: hello),
            port: tunnel.port, offeredALPN: hello.alpnProtocols, identity: clientIdentity(hello),
            probe: tunnel.probe, profile: profile)
        let interception = Interception(tunnel: tunnel, hello: hello, verdict: verdict)
        receive(.interceptionStarted(interception, now: context.clock.now()))
        if tunnel.probe == .trust {
            // `https://mitm.proxy/`: the proxy's own pages over TLS with a forged certificate, so that a client
            // that loads them proves it trusts the CA.
            startClientHandshake(interception, names: [ForgeNames.name(for: LocalPages.host)], upstream: .proxyItself)
        } else if let shared = sharedHTTP2Upstream(for: interception) {
            interceptSharing(interception, shared)
        } else if case .pooled(let entry)? = life.upstreamProgress {
            receive(.upstreamTaken)
            interceptReusing(interception, entry)
        } else if case .overlap(let names, let alpn) = firstContactPlan(interception, profile: profile) {
            interceptOverlapping(interception, names: names, alpn: alpn)
        } else if tunnel.answeredByRule != nil {
            interceptWithoutUpstream(interception)
        } else {
            needUpstream()
        }
    }

    /// Asks for the interception's upstream. A connect that ended before the readiness set said so is taken now: the
    /// upstream's handshake then starts in this turn, not after the other descriptors ready in it.
    func needUpstream() {
        if case .connecting(let attempt)? = life.upstreamProgress { attempt.settleIfConnected() }
        if life.reachesUpstream { receive(.upstreamNeeded) }
    }

    /// Intercepts over an idle pooled upstream when it was opened the same way this client asks.
    func interceptReusing(_ interception: Interception, _ entry: PooledUpstream) {
        let hello = interception.hello
        guard entry.serverName == interception.upstreamServerName, entry.offeredALPN == upstreamALPN(for: interception),
            hello.serverName == nil || hello.validServerName != nil
        else {
            entry.leg.close()
            startConnecting(host: interception.tunnel.host, port: interception.tunnel.port)
            return
        }
        let ready = ReadyUpstream(
            leg: entry.leg, certificate: entry.certificate,
            timings: UpstreamConnectionTimings(dns: -1, connect: -1, ssl: -1, address: entry.address))
        startClientHandshake(
            interception,
            names: context.pool(for: loop).forgedNames(primary: interception.host, upstream: entry.certificate),
            upstream: .ready(ready))
    }

    func interceptOver(_ interception: Interception, upstream: Result<UpstreamConnection, UpstreamFailure>) {
        let tunnel = interception.tunnel
        if let name = interception.hello.serverName, interception.hello.validServerName == nil {
            // The connection was handed here: nothing else closes it.
            if case .success(let connection) = upstream { connection.socket.close() }
            interception.verdict.observe(.handshakeFailed("invalid server name (SNI)"))
            context.events.emit(
                .clientTLSFailed(
                    connectionID: id, host: tunnel.host, port: tunnel.port,
                    reason: "the client sent an invalid server name (SNI) \"\(name.prefix(80))\""))
            close(reason: "invalid SNI")
            return
        }
        switch upstream {
        case .failure(let failure):
            upstreamFailedBeforeForging(interception, reason: failure.reason)
        case .success(let connection):
            let leg: TLSLeg
            do {
                leg = try startUpstreamTLS(interception, over: connection) { [unowned self] outcome in
                    switch outcome {
                    case .success(let ready):
                        // An h2 upstream speaks first (SETTINGS): hold its bytes until a relay takes them.
                        ready.leg.pauseReading()
                        upstreamReady(interception, ready)
                    case .failure(let failure):
                        upstreamFailedBeforeForging(interception, reason: failure.reason)
                    }
                }
            } catch {
                upstreamFailedBeforeForging(interception, reason: error.reason)
                return
            }
            // Unless the handshake already ended: it can fail at once.
            if life.reachesUpstream { receive(.upstreamHandshakeStarted(leg)) }
        }
    }

    /// Starts TLS toward the origin over `connection`, verified for the interception's host and offering its ALPN;
    /// `done` gets the upstream with what reaching it cost, or why it failed (the leg is closed then).
    func startUpstreamTLS(
        _ interception: Interception, over connection: UpstreamConnection,
        _ done: @escaping (Result<ReadyUpstream, UpstreamFailure>) -> Void
    ) throws(UpstreamFailure) -> TLSLeg {
        let host = interception.host
        let port = interception.tunnel.port
        let settings = RouteTLS(
            serverName: interception.upstreamServerName, verifyName: host, alpn: upstreamALPN(for: interception))
        return try OriginTLS.start(over: connection, host: host, port: port, settings: settings, context: context) {
            outcome in
            switch outcome {
            case .ready(let leg, let timings):
                done(.success(ReadyUpstream(leg: leg, certificate: leg.tls.peerCertificates.first, timings: timings)))
            case .failed(let reason):
                done(.failure(UpstreamFailure(host: host, port: port, reason: reason)))
            }
        }
    }

    /// No upstream: the client still gets a forged certificate (its verdict does not depend on the origin), then 502s.
    func upstreamFailedBeforeForging(_ interception: Interception, reason: String) {
        context.events.emit(
            .upstreamFailed(connectionID: id, host: interception.host, port: interception.tunnel.port, reason: reason))
        if case .overlapping = life.state {
            receive(.overlappedUpstreamSettled(.failed(reason: reason)))
            return
        }
        startClientHandshake(
            interception, names: [ForgeNames.name(for: interception.host)], upstream: .failed(reason: reason))
    }

    func startClientHandshake(
        _ interception: Interception, names: [SubjectAlternativeName], upstream: InterceptedUpstream
    ) {
        switch life.state {
        case .reachingUpstream, .upstreamHandshake:
            break
        default:
            // The upstream came after the connection ended.
            if case .ready(let ready) = upstream { ready.leg.close() }
            return
        }
        let leg = makeClientLeg(
            interception, names: names, alpn: clientALPNOffer(interception, upstream: upstream), after: upstream)
        leg?.startHandshake(initialBytes: interception.tunnel.takePeeked())
    }

    /// Forges for `names` and makes the client's leg offering `alpn`, whose handshake goes after the upstream's
    /// (`upstream`), or overlapping it (nil: the relay waits for both). Nil when forging failed (the connection closed).
    func makeClientLeg(
        _ interception: Interception, names: [SubjectAlternativeName], alpn: [String],
        after upstream: InterceptedUpstream?
    ) -> TLSLeg? {
        let verdict = interception.verdict
        let host = interception.host
        let port = interception.tunnel.port
        let tls: TLSConnection
        do {
            let identity = try context.profiles.identity(for: verdict.profile, names: interception.forgedNames(names))
            verdict.shownCertificatePin = identity.pin
            tls = try TLSConnection(
                server: context.serverTLS, certificate: identity.certificate, key: identity.key,
                chain: identity.chain, alpn: alpn, host: host)
        } catch {
            if case .ready(let ready) = upstream { ready.leg.close() }
            context.events.emit(
                .clientTLSFailed(
                    connectionID: id, host: host, port: port, reason: "cannot forge a certificate: \(error)"))
            close(reason: "forging failed")
            return nil
        }
        let leg = TLSLeg(socket: clientSocket, tls: tls)
        if let upstream {
            receive(.clientHandshakeStarted(leg, upstream, serverName: host, now: context.clock.now()))
        } else {
            receive(.overlapStarted(leg, serverName: host, now: context.clock.now()))
        }
        leg.onHandshake = { [unowned self, unowned leg] outcome in
            if leg.tls.certificateSent { verdict.observe(.certificateSent) }
            switch outcome {
            case .complete:
                guard let upstream else {
                    // The client's request waits unread for the upstream; the silence window starts with the relay.
                    leg.pauseReading()
                    verdict.recordHandshake(leg)
                    receive(.overlappedClientDone(now: context.clock.now()))
                    return
                }
                verdict.handshakeCompleted(leg, loop: loop)
                clientHandshakeCompleted(interception, leg, upstream: upstream)
            case .failed(let failure):
                if let alert = failure.receivedAlert {
                    verdict.observe(.alertReceived(alert))
                } else {
                    verdict.observe(.handshakeFailed(failure.reason))
                }
                context.events.emit(
                    .clientTLSFailed(connectionID: id, host: host, port: port, reason: Self.describeClient(failure)))
                close(reason: "client TLS handshake failed")
            case .peerClosed(let reset):
                verdict.observe(.peerClosed(reset: reset))
                let how = reset ? "reset the connection" : "closed the connection"
                let when =
                    leg.tls.certificateSent ? "after receiving the certificate" : "before the certificate was sent"
                context.events.emit(
                    .clientTLSFailed(
                        connectionID: id, host: host, port: port,
                        reason: "the client \(how) during the TLS handshake, \(when), without an alert"))
                close(reason: "client left during the handshake")
            }
        }
        leg.onFirstData = { verdict.observe(.applicationData) }
        leg.onInputEnd = { alert, reset in
            if let alert {
                verdict.observe(.alertReceived(alert))
            } else {
                verdict.observe(.peerClosed(reset: reset))
            }
        }
        return leg
    }

    static func describeClient(_ failure: TLSFailure) -> String {
        if let alert = failure.receivedAlert {
            return alert.rejectsCertificate
                ? "the client rejected the certificate: alert \(alert.name)"
                : "the client aborted the handshake: alert \(alert.name)"
        }
        return "the TLS handshake failed: \(failure.reason)"
    }

    func clientHandshakeCompleted(_ interception: Interception, _ leg: TLSLeg, upstream: InterceptedUpstream) {
        let host = interception.host
        let port = interception.tunnel.port
        context.events.emit(
            .intercepted(
                connectionID: id, host: host, port: port,
                tlsVersion: leg.tls.protocolVersion, alpn: leg.tls.negotiatedALPN))
        interception.upstream = upstream
        // One decision for both protocols: the upstream, or a 502 naming why there is none.
        let upstreamLeg: Leg?
        let failure: String
        let timings: UpstreamConnectionTimings?
        switch upstream {
        case .proxyItself:
            let relay = HTTPRelay(
                connectionID: id, context: context, loop: loop, client: leg, parser: HTTP1Parser(role: .request),
                mode: .plain)
            startRelaying(.http1(relay), for: .interception(interception))
            relay.start()
            return
        case .ready(let ready):
            (upstreamLeg, failure, timings) = (ready.leg, "", ready.timings)
        case .failed(let reason):
            (upstreamLeg, failure, timings) = (nil, reason, nil)
        case .released:
            (upstreamLeg, failure, timings) = (nil, "no upstream connection", nil)
        case .shared(let shared):
            // Reused: nothing reaching it cost this exchange.
            (upstreamLeg, failure, timings) = (
                nil, "the client did not agree to HTTP/2 on a shared HTTP/2 upstream",
                UpstreamConnectionTimings(dns: -1, connect: -1, ssl: -1, address: shared.address)
            )
        }
        if leg.tls.negotiatedALPN == "h2" {
            startHTTP2Relay(interception, leg, upstream: upstream, failure: failure, timings: timings)
            return
        }
        let relay = HTTPRelay(
            connectionID: id, context: context, loop: loop, client: leg, parser: HTTP1Parser(role: .request),
            mode: upstreamLeg == nil
                ? .failing(host: host, port: port, reason: failure) : .intercepted(host: host, port: port),
            upstream: upstreamLeg)
        relay.newConnectionTimings = timings
        relay.originAuthority = reverseTarget?.authority
        relay.records.clientName = interception.verdict.clientName
        startRelaying(.http1(relay), for: .interception(interception))
        relay.start()
    }

    /// The relay is done with an idle, healthy upstream: park it for the next client of the origin, opened
    /// the same way (SNI and ALPN), or close it.
    func relayReleasedUpstream(_ leg: Leg) {
        guard case .relaying(_, .interception(let interception)) = life.state,
            case .ready(let ready)? = interception.upstream,
            let tlsLeg = leg as? TLSLeg, tlsLeg === ready.leg
        else {
            leg.close()
            return
        }
        interception.upstream = .released
        context.pool(for: loop).park(
            PooledUpstream(
                leg: tlsLeg, host: interception.tunnel.host, port: interception.tunnel.port,
                serverName: interception.upstreamServerName,
                certificate: ready.certificate, address: ready.timings.address,
                offeredALPN: upstreamALPN(for: interception)))
    }

    /// ALPN for the client: exactly what the upstream chose, or the client's own choice when no upstream answered.
    func clientALPNOffer(_ interception: Interception, upstream: InterceptedUpstream) -> [String] {
        switch upstream {
        case .proxyItself: ["http/1.1"]
        case .ready(let ready): ALPNPolicy.clientOffer(upstreamChose: ready.leg.tls.negotiatedALPN)
        case .shared: ["h2"]
        case .failed, .released:
            withoutH2IfRuled(
                ALPNPolicy.clientOfferWithoutUpstream(clientOffered: interception.hello.alpnProtocols), interception)
        }
    }
}
