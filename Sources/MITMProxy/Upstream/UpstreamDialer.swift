import MITMIO

/// An upstream connection being made; cancelling it means its completion never runs.
protocol UpstreamAttempt: AnyObject {
    func cancel()
    /// Completes the attempt now if its connect has already ended, before the readiness set reports it.
    func settleIfConnected()
}

extension UpstreamAttempt {
    func settleIfConnected() {}
}

/// Opens upstream connections for the proxy: over TCP in the proxy, in memory in tests that run a
/// connection's whole life without sockets.
protocol UpstreamDialer: Sendable {
    /// Starts reaching `host:port`; `completion` runs once, on `loop`, unless the attempt is cancelled. With
    /// `guardedClient` (the address of a client on another machine), addresses of this machine are not dialled: if
    /// nothing else is left, the attempt fails with `refusedLocalTarget`.
    func dial(
        host: String, port: Int, guardedClient: String?, context: ProxyContext, loop: EventLoop,
        _ completion: @escaping (Result<UpstreamConnection, UpstreamFailure>) -> Void
    ) -> any UpstreamAttempt
}

/// The proxy's dialer: DNS (with `--resolve`), then TCP to each address in turn, never to the proxy itself.
struct SocketDialer: UpstreamDialer {
    func dial(
        host: String, port: Int, guardedClient: String?, context: ProxyContext, loop: EventLoop,
        _ completion: @escaping (Result<UpstreamConnection, UpstreamFailure>) -> Void
    ) -> any UpstreamAttempt {
        UpstreamConnector.connect(
            host: host, port: port, guardedClient: guardedClient, context: context, loop: loop, completion)
    }
}

extension UpstreamConnector: UpstreamAttempt {}
