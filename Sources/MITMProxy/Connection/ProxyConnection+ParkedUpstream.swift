import MITMCore
import MITMIO

/// Getting an upstream back for an intercepted HTTP/1 client whose relay parked its idle one (see
/// `HTTPRelay+Parking.swift`): a pooled connection opened the same way (SNI and ALPN) if the loop has one, otherwise a
/// new one, reached as a route is (`RouteAttempt`: TCP, then TLS verified like the first, within the handshake timeout).
extension ProxyConnection {
    func relayNeedsUpstream(_ done: @escaping (Result<ReadyUpstream, UpstreamFailure>) -> Void) -> (
        any UpstreamAttempt
    )? {
        guard case .relaying(_, .interception(let interception)) = life.state else {
            done(.failure(UpstreamFailure(host: "upstream", port: 0, reason: "the connection is closing")))
            return nil
        }
        guard case .released? = interception.upstream else {
            done(
                .failure(
                    UpstreamFailure(
                        host: interception.host, port: interception.tunnel.port, reason: "no upstream connection")))
            return nil
        }
        let tunnel = interception.tunnel
        let alpn = upstreamALPN(for: interception)
        if let entry = context.pool(for: loop).take(
            host: tunnel.host, port: tunnel.port,
            where: {
                $0.serverName == interception.upstreamServerName && $0.offeredALPN == alpn
                    && $0.leg.tls.negotiatedALPN != "h2"
            })
        {
            let ready = ReadyUpstream(
                leg: entry.leg, certificate: entry.certificate,
                timings: UpstreamConnectionTimings(dns: -1, connect: -1, ssl: -1, address: entry.address))
            interception.upstream = .ready(ready)
            done(.success(ready))
            return nil
        }
        let route = UpstreamRoute(scheme: "https", host: tunnel.host, port: tunnel.port)
        let tls = RouteTLS(serverName: interception.upstreamServerName, verifyName: interception.host, alpn: alpn)
        return RouteAttempt.dial(route, tls: tls, guardedClient: guardedClient, context: context, loop: loop) {
            [weak self] result in
            guard let self else {
                if case .success(let reached) = result { reached.leg.close() }
                return
            }
            done(retaken(result, for: interception))
        }
    }

    /// The upstream a route attempt reached, unless it negotiated HTTP/2, which cannot carry this HTTP/1 client's requests.
    private func retaken(
        _ result: Result<(leg: Leg, timings: UpstreamConnectionTimings), UpstreamFailure>,
        for interception: Interception
    ) -> Result<ReadyUpstream, UpstreamFailure> {
        let leg: TLSLeg
        let timings: UpstreamConnectionTimings
        switch result {
        case .failure(let failure): return .failure(failure)
        case .success(let reached):
            guard let tlsLeg = reached.leg as? TLSLeg else {
                reached.leg.close()
                return .failure(
                    UpstreamFailure(
                        host: interception.host, port: interception.tunnel.port, reason: "no TLS on the new connection")
                )
            }
            (leg, timings) = (tlsLeg, reached.timings)
        }
        guard leg.tls.negotiatedALPN != "h2" else {
            leg.close()
            return .failure(
                UpstreamFailure(
                    host: interception.host, port: interception.tunnel.port,
                    reason: "answered a new connection with HTTP/2, but this client speaks HTTP/1.1"))
        }
        let ready = ReadyUpstream(leg: leg, certificate: leg.tls.peerCertificates.first, timings: timings)
        interception.upstream = .ready(ready)
        return .success(ready)
    }
}
