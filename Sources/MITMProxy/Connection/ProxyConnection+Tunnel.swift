import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// A CONNECT tunnel before interception: the peek at the first bytes, raw tunnels, server-speaks-first.
extension ProxyConnection {
    func peek(_ tunnel: Tunnel, _ bytes: [UInt8]) {
        tunnel.peeked.append(contentsOf: bytes)
        switch ClientHelloParser.parse(tunnel.peeked) {
        case .needMoreData:
            return
        case .notTLS:
            clientSocket.pauseReading()
            if tunnel.probe == .trust {
                close(reason: "the trust probe \(LocalPages.host) speaks only TLS")
                return
            }
            if tunnel.request == .transparent, Self.looksLikeHTTPRequest(tunnel.peeked) {
                startTransparentHTTP(tunnel)
                return
            }
            receive(.rawTunnelChosen)
        case .clientHello(let hello):
            clientSocket.pauseReading()
            // The proxy's own pins probe (`mitm-proxy pins --proxy`) must see the server's chain, never a forgery to paste into an app.
            let decision: TunnelDecision =
                switch tunnel.probe {
                case .trust: .intercept(.trusted)
                case .pins: .passThrough
                case nil: decide(tunnel, hello)
                }
            switch decision {
            case .intercept(let profile):
                intercept(tunnel, hello, profile: profile)
            case .passThrough:
                tunnel.passedThrough = true
                receive(.rawTunnelChosen)
            case .refuse(let reason):
                close(reason: "refused by policy: \(reason)")
            }
        case .malformed(let reason):
            let tracker = VerdictTracker(
                context: context, connectionID: id, host: tunnel.host, port: tunnel.port, offeredALPN: [],
                identity: clientIdentity(nil), probe: tunnel.probe)
            tracker.observe(.handshakeFailed("the client sent a broken TLS ClientHello: \(reason)"))
            tracker.finish()
            context.events.emit(
                .clientTLSFailed(
                    connectionID: id, host: tunnel.host, port: tunnel.port,
                    reason: "the client sent a broken TLS ClientHello: \(reason)"))
            close(reason: "malformed ClientHello")
        }
    }

    /// The client's IP address.
    var clientAddress: String? { clientSocket.peerHost }

    /// The policy's one decision for this tunnel, made before anything goes upstream.
    func decide(_ tunnel: Tunnel, _ hello: ClientHello) -> TunnelDecision {
        let facts = TunnelFacts(
            connectHost: tunnel.host, connectPort: tunnel.port,
            serverName: hello.validServerName, offeredALPN: hello.alpnProtocols,
            client: clientSocket.peerDescription)
        return context.configuration.tunnelPolicy.decide(facts)
    }

    func upstreamSpokeFirst(_ bytes: [UInt8]) {
        guard case .peeking(let tunnel, .connected(let connection), _) = life.state else { return }
        receive(.upstreamTaken)
        connection.socket.pauseReading()
        startRawTunnel(tunnel, over: connection.socket, initialDown: bytes)
    }

    func upstreamClosedWhilePeeking() {
        guard case .peeking(let tunnel, _, _) = life.state else { return }
        close(reason: "upstream \(tunnel.host):\(tunnel.port) closed the connection before the client spoke")
    }

    func rawTunnelUnreachable(_ tunnel: Tunnel, _ failure: UpstreamFailure) {
        context.events.emit(
            .upstreamFailed(connectionID: id, host: tunnel.host, port: tunnel.port, reason: failure.reason))
        guard Self.looksLikeHTTPRequest(tunnel.peeked) else {
            close(reason: "upstream unreachable")
            return
        }
        // The 200 went out before the connect failed; a plain-HTTP client in the tunnel can still be told why.
        answerAndLinger(.badGateway(host: tunnel.host, port: tunnel.port, reason: failure.reason))
    }

    /// Whether a tunnel's first bytes start an HTTP/1 request line (`GET /`, `POST /x`).
    static func looksLikeHTTPRequest(_ bytes: [UInt8]) -> Bool {
        guard let space = bytes.prefix(24).firstIndex(of: UInt8(ascii: " ")), space > 0 else { return false }
        return bytes[..<space].allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    func startRawTunnel(_ tunnel: Tunnel, over socket: any ByteStream, initialDown: [UInt8]) {
        tunnel.serverFirstWatcher = nil
        let relay = RawRelay(client: PlainLeg(socket: clientSocket), upstream: PlainLeg(socket: socket))
        startRelaying(.raw(relay), for: .tunnel(tunnel))
        relay.start(initialUp: tunnel.takePeeked(), initialDown: initialDown)
    }
}

/// Watches an upstream socket while the client has not spoken yet.
final class ServerFirstWatcher: StreamSocketDelegate {
    unowned let owner: ProxyConnection
    private let socket: any ByteStream

    init(owner: ProxyConnection, socket: any ByteStream) {
        self.owner = owner
        self.socket = socket
        socket.delegate = self
    }

    deinit { socket.detach(self) }

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        owner.upstreamSpokeFirst(Array(bytes))
    }
    func socketDidReadEOF(_ socket: any ByteStream) { owner.upstreamClosedWhilePeeking() }
    func socket(_ socket: any ByteStream, didFail error: SystemCallError) { owner.upstreamClosedWhilePeeking() }
    func socketDidDrain(_ socket: any ByteStream) {}
}
