import MITMCore
import MITMTLS

/// The engine's objects in a connection's states (`ConnectionLife`).
enum ProxyConnectionParts: ConnectionParts {
    typealias Tunnel = MITMProxy.Tunnel
    typealias PooledUpstream = MITMProxy.PooledUpstream
    typealias UpstreamAttempt = any MITMProxy.UpstreamAttempt
    typealias UpstreamConnection = MITMProxy.UpstreamConnection
    typealias UpstreamFailure = MITMProxy.UpstreamFailure
    typealias Interception = MITMProxy.Interception
    typealias HandshakeLeg = TLSLeg
    typealias Upstream = InterceptedUpstream
    typealias Relay = ProxyConnection.Relay
}

/// The one place where a connection does what its life says.
extension ProxyConnection {
    func perform(_ actions: [Life.Action]) {
        for action in actions {
            switch action {
            case .reportTimeout(let host, let waitingFor):
                context.events.emit(.timedOut(connectionID: id, host: host, what: waitingFor))
            case .reportClientHandshakeFailure(let host, let port, let reason):
                context.events.emit(.clientTLSFailed(connectionID: id, host: host, port: port, reason: reason))
            case .abandonUpstreamHandshake(let interception, let leg, let reason):
                leg.onHandshake = nil
                leg.close()
                upstreamFailedBeforeForging(interception, reason: reason)
            case .relayOverlapped(let interception, let leg, let upstream):
                relayOverlapped(interception, leg, upstream: upstream)
            case .offerDeadlineToRelay(let relay, let reason):
                relayDeadlinePassed(relay, otherwise: reason)
            case .offerIdleUpstream(let relay):
                if case .http1(let relay) = relay { relay.parkIdleUpstream() }
            case .compact(let relay):
                relay.compactIfIdle()
            case .closeRelay(let relay, let reason):
                relay.close(reason: reason)
            case .relayEnded(let relay, let relayed, let reason):
                if case .raw(let raw) = relay, case .tunnel(let tunnel) = relayed {
                    context.events.emit(
                        .tunnel(
                            connectionID: id, host: tunnel.host, port: tunnel.port, bytesUp: raw.bytesUp,
                            bytesDown: raw.bytesDown, reason: reason, passedThrough: tunnel.passedThrough,
                            started: tunnel.started))
                }
                if case .interception(let interception) = relayed { interception.verdict.finish() }
            case .dialUpstream(let target):
                startConnecting(host: target.host, port: target.port)
            case .answerTarget(let tunnel, let failure):
                targetReached(tunnel, failure: failure)
            case .watchServerFirst(let tunnel, let connection):
                // Server-speaks-first protocols (SMTP, FTP) never send a ClientHello: watch the upstream too.
                tunnel.serverFirstWatcher = ServerFirstWatcher(owner: self, socket: connection.socket)
                connection.socket.resumeReading()
            case .relayRawTunnel(let tunnel, let connection):
                startRawTunnel(tunnel, over: connection.socket, initialDown: [])
            case .rawTunnelUnreachable(let tunnel, let failure):
                rawTunnelUnreachable(tunnel, failure)
            case .secureUpstream(let interception, let connection):
                interceptOver(interception, upstream: .success(connection))
            case .interceptionUnreachable(let interception, let failure):
                interceptOver(interception, upstream: .failure(failure))
            case .cancelUpstreamAttempt(let attempt):
                attempt.cancel()
            case .closePooledUpstream(let entry):
                entry.leg.close()
            case .closeUpstreamConnection(let connection):
                connection.socket.close()
            case .closeHandshakeLeg(let leg):
                leg.close()
            case .releaseUpstream(let upstream):
                if case .ready(let ready) = upstream { ready.leg.close() }
            case .abandonInterception(let interception):
                interception.verdict.finish()
            case .closeClient:
                clientSocket.close()
            case .leaveRegistry:
                context.registry(for: loop).remove(self)
            case .impossible(let event):
                close(reason: "connection: \(event.rawValue)")
            }
        }
    }

    /// A relay answers what it can when its deadline passes (a slow request head, a pause for the web UI); otherwise
    /// the connection closes for `reason`.
    private func relayDeadlinePassed(_ relay: Relay, otherwise reason: String) {
        let now = context.clock.now()
        switch relay {
        case _ where relay.holdsBreakpoint:
            // A pause waits for the web UI, and ends at its own deadline.
            relayActivity(headDeadline: httpRelay?.headDeadline)
        case .http1(let relay):
            if relay.answerSlowHead(now: now) || relay.answerTimeout(after: context.configuration.idleTimeout) {
                return
            }
            close(reason: reason)
        case .web(let web):
            if web.idleDeadlinePassed() { return }
            close(reason: reason)
        case .http2, .raw:
            close(reason: reason)
        }
    }
}
