import MITMCore
import MITMIO

/// Getting an upstream back for an intercepted HTTP/1 client whose relay parked its idle one (see
/// `HTTPRelay+Parking.swift`): a pooled connection opened the same way (SNI and ALPN) if the loop has one, otherwise a
/// new TCP connection and a TLS handshake verified like the first.
extension ProxyConnection {
    func relayNeedsUpstream(_ done: @escaping (Result<ReadyUpstream, UpstreamFailure>) -> Void) -> (any UpstreamAttempt)? {
        guard case .relaying(_, .interception(let interception)) = phase else {
            done(.failure(UpstreamFailure(host: "upstream", port: 0, reason: "the connection is closing")))
            return nil
        }
        guard case .established(.released) = interception.stage else {
            done(.failure(UpstreamFailure(host: interception.host, port: interception.tunnel.port, reason: "no upstream connection")))
            return nil
        }
        let tunnel = interception.tunnel
        let pool = context.pool(for: loop)
        if let entry = pool.take(host: tunnel.host, port: tunnel.port) {
            if entry.serverName == interception.upstreamServerName, entry.offeredALPN == upstreamALPN(for: interception),
               entry.leg.tls.negotiatedALPN != "h2" {
                let ready = ReadyUpstream(leg: entry.leg, certificate: entry.certificate,
                                          timings: UpstreamConnectionTimings(dns: -1, connect: -1, ssl: -1, address: entry.address))
                interception.stage = .established(upstream: .ready(ready))
                done(.success(ready))
                return nil
            }
            pool.park(entry)
        }
        let attempt = UpstreamRetake()
        attempt.dialling = context.dialer.dial(host: tunnel.host, port: tunnel.port, guardedClient: guardedClient,
                                               context: context, loop: loop) { [weak self, weak attempt] result in
            guard let self, let attempt, !attempt.cancelled else {
                if case .success(let connection) = result { connection.socket.close() }
                return
            }
            attempt.dialling = nil
            switch result {
            case .failure(let failure):
                done(.failure(failure))
            case .success(let connection):
                do throws(UpstreamFailure) {
                    attempt.handshaking = try startUpstreamTLS(interception, over: connection) { [weak self, weak attempt] outcome in
                        guard let self, let attempt, !attempt.cancelled else {
                            if case .success(let ready) = outcome { ready.leg.close() }
                            return
                        }
                        attempt.handshaking = nil
                        done(retaken(outcome, for: interception))
                    }
                } catch {
                    done(.failure(error))
                }
            }
        }
        return attempt
    }

    /// A new upstream that negotiated HTTP/2 cannot carry this HTTP/1 client's requests.
    private func retaken(_ outcome: Result<ReadyUpstream, UpstreamFailure>,
                         for interception: Interception) -> Result<ReadyUpstream, UpstreamFailure> {
        guard case .success(let ready) = outcome else { return outcome }
        guard ready.leg.tls.negotiatedALPN != "h2" else {
            ready.leg.close()
            return .failure(UpstreamFailure(host: interception.host, port: interception.tunnel.port,
                                            reason: "answered a new connection with HTTP/2, but this client speaks HTTP/1.1"))
        }
        interception.stage = .established(upstream: .ready(ready))
        return .success(ready)
    }
}

/// An upstream being reopened for a relay: the TCP connect, then the TLS handshake; cancelling drops either.
final class UpstreamRetake: UpstreamAttempt {
    var dialling: (any UpstreamAttempt)?
    var handshaking: TLSLeg?
    private(set) var cancelled = false

    func cancel() {
        cancelled = true
        dialling?.cancel()
        dialling = nil
        handshaking?.onHandshake = nil
        handshaking?.close()
        handshaking = nil
    }
}
