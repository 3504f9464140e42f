import MITMIO
import Synchronization

@testable import MITMProxy

/// Upstreams in memory: `host:port` registered by the test answer with a stream pair whose far end the
/// test drives; anything else is refused, as a closed port would be.
final class MemoryDialer: UpstreamDialer, @unchecked Sendable {
    // @unchecked Sendable: `accepted` is guarded by its mutex; the network is Sendable.
    let network: MemoryNetwork
    private let origins: Set<String>
    /// `host:port` targets that stand for the proxy's own machine: a guarded client is refused them, as the real
    /// connector refuses this machine's addresses.
    private let localTargets: Set<String>
    private let tlsOrigin: (@Sendable (MemoryStream) -> MemoryTLSPeer)?
    private let accepted = Mutex<[MemoryPeer]>([])
    private let acceptedTLS = Mutex<[MemoryTLSPeer]>([])

    /// `tlsOrigin` makes the origin end speak TLS (for every origin).
    init(
        network: MemoryNetwork, origins: Set<String>, localTargets: Set<String> = [],
        tlsOrigin: (@Sendable (MemoryStream) -> MemoryTLSPeer)? = nil
    ) {
        self.network = network
        self.origins = origins
        self.localTargets = localTargets
        self.tlsOrigin = tlsOrigin
    }

    /// The origin ends of the connections the proxy opened, in order.
    var connections: [MemoryPeer] { accepted.withLock { $0 } }

    /// The TLS origin ends, in order.
    var tlsConnections: [MemoryTLSPeer] { acceptedTLS.withLock { $0 } }

    func dial(
        host: String, port: Int, guardedClient: String?, context: ProxyContext, loop: EventLoop,
        _ completion: @escaping (Result<UpstreamConnection, UpstreamFailure>) -> Void
    ) -> any UpstreamAttempt {
        let attempt = MemoryAttempt()
        nonisolated(unsafe) let completion = completion
        let known = origins.contains("\(host):\(port)")
        network.later { [self] in
            guard !attempt.cancelled else { return }
            if let guardedClient, localTargets.contains("\(host):\(port)") {
                let reason = LocalTargetGuard.reason(
                    host: host, port: port, address: "127.0.0.1", client: guardedClient)
                completion(.failure(UpstreamFailure(host: host, port: port, reason: reason, refusedLocalTarget: true)))
                return
            }
            guard known else {
                completion(
                    .failure(
                        UpstreamFailure(
                            host: host, port: port, reason: "connection refused (nothing listens on that port)")))
                return
            }
            let (proxySide, originSide) = network.pair("\(host):\(port)", "proxy")
            if let tlsOrigin {
                let peer = tlsOrigin(originSide)
                acceptedTLS.withLock { $0.append(peer) }
            } else {
                accepted.withLock { $0.append(MemoryPeer(originSide)) }
            }
            completion(
                .success(
                    UpstreamConnection(
                        socket: proxySide, address: "192.0.2.1", dnsMilliseconds: 0, connectMilliseconds: 0)))
        }
        return attempt
    }
}

final class MemoryAttempt: UpstreamAttempt, @unchecked Sendable {
    // @unchecked Sendable: touched on the loop only.
    var cancelled = false
    func cancel() { cancelled = true }
}
