import Foundation
import MITMCore
import MITMTLS

/// The one way TLS toward an origin starts, for an interception's upstream and for a route the relay reaches: over a
/// connected socket, with `settings`' SNI, verified name and ALPN, against the system store and `--upstream-ca`.
enum OriginTLS {
    /// How a handshake toward an origin ended.
    enum Outcome {
        /// Done: the leg, and what reaching the origin cost, TLS included.
        case ready(TLSLeg, UpstreamConnectionTimings)
        /// Failed, in words for the log and the 502; the leg is closed.
        case failed(reason: String)
    }

    /// Starts the handshake over `connection` to `host:port`; `done` gets its outcome. Throws when TLS cannot start
    /// (the socket is closed then).
    static func start(
        over connection: UpstreamConnection, host: String, port: Int, settings: RouteTLS, context: ProxyContext,
        _ done: @escaping (Outcome) -> Void
    ) throws(UpstreamFailure) -> TLSLeg {
        let tls: TLSConnection
        do {
            tls = try TLSConnection(
                client: context.upstreamTLS, serverName: settings.serverName, verifyName: settings.verifyName,
                port: port, alpn: settings.alpn)
        } catch {
            connection.socket.close()
            throw UpstreamFailure(host: host, port: port, reason: "cannot start TLS: \(error)")
        }
        let leg = TLSLeg(socket: connection.socket, tls: tls)
        let started = context.clock.now()
        leg.onHandshake = { [unowned leg] outcome in
            switch outcome {
            case .complete:
                done(
                    .ready(
                        leg,
                        UpstreamConnectionTimings(
                            dns: connection.dnsMilliseconds, connect: connection.connectMilliseconds,
                            ssl: context.clock.milliseconds(since: started), address: connection.address)))
            case .failed(let failure):
                leg.close()
                done(.failed(reason: describe(failure)))
            case .peerClosed:
                leg.close()
                done(.failed(reason: "closed the connection during the TLS handshake"))
            }
        }
        leg.startHandshake()
        return leg
    }

    /// Why a handshake toward an origin failed, in words.
    static func describe(_ failure: TLSFailure) -> String {
        if let verifyError = failure.verifyError { return "its certificate is not trusted: \(verifyError)" }
        if let alert = failure.receivedAlert { return "TLS handshake failed: it sent alert \(alert.name)" }
        return "TLS handshake failed: \(failure.reason)"
    }
}
