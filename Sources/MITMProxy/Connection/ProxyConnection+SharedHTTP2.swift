import MITMCore
import MITMHTTP2
import MITMIO

/// HTTP/2 upstream connections shared by the client connections of a loop that go to the same origin the same way.
extension ProxyConnection {
    /// How an HTTP/2 upstream connection for this interception would have been opened.
    func http2PoolKey(_ interception: Interception) -> UpstreamPoolKey {
        UpstreamPoolKey(
            origin: .init(host: interception.tunnel.host, port: interception.tunnel.port),
            serverName: interception.upstreamServerName, alpn: "h2",
            verifiesCertificate: !context.configuration.upstreamInsecure)
    }

    /// A pooled HTTP/2 connection this client can share: it would offer h2 upstream, sent a valid name (or none),
    /// and a connection opened the same way has room for more streams.
    func sharedHTTP2Upstream(for interception: Interception) -> SharedHTTP2Upstream? {
        guard interception.tunnel.probe == nil, guardedClient == nil, upstreamALPN(for: interception).contains("h2"),
            interception.hello.serverName == nil || interception.hello.validServerName != nil
        else { return nil }
        return context.pool(for: loop).sharedHTTP2(for: http2PoolKey(interception))
    }

    /// Intercepts over a pooled HTTP/2 connection that other clients of the origin use too (an idle pooled
    /// HTTP/1 connection the tunnel held goes back to the pool; a connect under way is let go when the client's handshake
    /// starts).
    func interceptSharing(_ interception: Interception, _ shared: SharedHTTP2Upstream) {
        if case .pooled(let entry)? = life.upstreamProgress {
            receive(.upstreamTaken)
            context.pool(for: loop).park(entry)
        }
        startClientHandshake(
            interception,
            names: context.pool(for: loop).forgedNames(primary: interception.host, upstream: shared.certificate),
            upstream: .shared(shared))
    }

    /// The HTTP/2 connection for an intercepted client's streams: the shared one it was given, or one made of its own
    /// new upstream (which joins the pool for later clients once its relay runs: see `startHTTP2Relay`).
    func http2Upstream(_ interception: Interception, _ upstream: InterceptedUpstream) throws(HTTP2SessionError)
        -> SharedHTTP2Upstream?
    {
        switch upstream {
        case .shared(let shared):
            return shared
        case .ready(let ready):
            return try SharedHTTP2Upstream(
                key: http2PoolKey(interception), leg: ready.leg, certificate: ready.certificate,
                address: ready.timings.address, loop: loop, clock: context.clock)
        case .failed, .released, .proxyItself:
            return nil
        }
    }

    /// Starts the HTTP/2 relay of an intercepted client over its upstream, or failing with `failure` without one.
    func startHTTP2Relay(
        _ interception: Interception, _ leg: TLSLeg, upstream: InterceptedUpstream, failure: String,
        timings: UpstreamConnectionTimings?
    ) {
        let host = interception.host
        let port = interception.tunnel.port
        let connection: SharedHTTP2Upstream?
        let relay: HTTP2Relay
        do {
            connection = try http2Upstream(interception, upstream)
        } catch {
            if case .ready(let ready) = upstream { ready.leg.close() }
            close(reason: "cannot start HTTP/2 upstream: \(error)")
            return
        }
        if let connection { interception.upstream = .shared(connection) }
        let fresh: Bool = if case .ready = upstream { true } else { false }
        do {
            relay = try HTTP2Relay(
                connectionID: id, context: context, loop: loop, client: leg,
                mode: connection.map {
                    .intercepted(host: host, port: port, upstream: $0)
                } ?? .failing(host: host, port: port, reason: failure))
        } catch {
            if fresh { connection?.stop() }
            close(reason: "cannot start HTTP/2: \(error)")
            return
        }
        if fresh { connection?.join(context.pool(for: loop)) }
        relay.newConnectionTimings = timings
        relay.originAuthority = reverseTarget?.authority
        relay.records.clientName = interception.verdict.clientName
        startRelaying(.http2(relay), for: .interception(interception))
        relay.start()
    }
}
