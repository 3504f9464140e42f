import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// An origin a request can be relayed to: plain HTTP, or HTTPS verified as `host`.
struct UpstreamRoute: Equatable {
    let scheme: String
    let host: String
    let port: Int

    /// `https://host:port`, for log lines.
    var text: String { AbsoluteURL(scheme: scheme, host: host, port: port, pathAndQuery: "").text }
}

/// How the TLS handshake of an HTTPS route goes: the SNI sent, the name verified, the ALPN offered.
struct RouteTLS {
    let serverName: String?
    let verifyName: String
    let alpn: [String]

    /// The route's own host as SNI (none for an IP address) and verified name, offering only http/1.1.
    static func `default`(for route: UpstreamRoute) -> RouteTLS {
        RouteTLS(
            serverName: HostName.isIPAddress(route.host) ? nil : route.host, verifyName: route.host, alpn: ["http/1.1"])
    }
}

/// Reaches an `UpstreamRoute` for the HTTP/1 relay: TCP through the proxy's dialer (`--resolve`, never the proxy
/// itself), then for HTTPS a TLS handshake (by default with the route's SNI and name verified against the system store
/// and `--upstream-ca`, offering only http/1.1). Within `--handshake-timeout`.
final class RouteAttempt: UpstreamAttempt {
    typealias Completion = (Result<(leg: Leg, timings: UpstreamConnectionTimings), UpstreamFailure>) -> Void
    private var completion: Completion?
    private var tcp: (any UpstreamAttempt)?
    private var leg: TLSLeg?
    private var timer: (any ClockTimer)?

    private init(completion: @escaping Completion) {
        self.completion = completion
    }

    /// `guardedClient`: see `UpstreamDialer.dial`.
    static func dial(
        _ route: UpstreamRoute, tls: RouteTLS? = nil, guardedClient: String?, context: ProxyContext, loop: EventLoop,
        _ completion: @escaping Completion
    ) -> RouteAttempt {
        let attempt = RouteAttempt(completion: completion)
        attempt.tcp = context.dialer.dial(
            host: route.host, port: route.port, guardedClient: guardedClient, context: context, loop: loop
        ) { [attempt] result in
            attempt.tcp = nil
            switch result {
            case .failure(let failure):
                attempt.finish(.failure(failure))
            case .success(let connection) where route.scheme == "http":
                attempt.finish(
                    .success(
                        (
                            PlainLeg(socket: connection.socket),
                            UpstreamConnectionTimings(
                                dns: connection.dnsMilliseconds, connect: connection.connectMilliseconds, ssl: -1,
                                address: connection.address)
                        )))
            case .success(let connection):
                attempt.startTLS(route, tls ?? .default(for: route), connection, context: context, loop: loop)
            }
        }
        return attempt
    }

    private func startTLS(
        _ route: UpstreamRoute, _ settings: RouteTLS, _ connection: UpstreamConnection, context: ProxyContext,
        loop: EventLoop
    ) {
        do {
            leg = try OriginTLS.start(
                over: connection, host: route.host, port: route.port, settings: settings, context: context
            ) { [unowned self] outcome in
                switch outcome {
                case .ready(let ready, let timings):
                    ready.pauseReading()
                    leg = nil
                    finish(.success((ready, timings)))
                case .failed(let reason):
                    failTLS(route, reason)
                }
            }
        } catch {
            finish(.failure(error))
            return
        }
        let timeout = context.configuration.handshakeTimeout
        nonisolated(unsafe) let unsafeSelf = self
        timer = context.clock.schedule(after: timeout, on: loop) {
            unsafeSelf.failTLS(route, "TLS handshake timed out (no answer within \(SecondsText.format(timeout)))")
        }
    }

    private func failTLS(_ route: UpstreamRoute, _ reason: String) {
        leg?.onHandshake = nil
        leg?.close()
        leg = nil
        finish(.failure(UpstreamFailure(host: route.host, port: route.port, reason: reason)))
    }

    func cancel() {
        completion = nil
        timer?.cancel()
        timer = nil
        tcp?.cancel()
        tcp = nil
        leg?.onHandshake = nil
        leg?.close()
        leg = nil
    }

    private func finish(_ result: Result<(leg: Leg, timings: UpstreamConnectionTimings), UpstreamFailure>) {
        timer?.cancel()
        timer = nil
        let callback = completion
        completion = nil
        if callback == nil, case .success(let ready) = result { ready.leg.close() }
        callback?(result)
    }
}
