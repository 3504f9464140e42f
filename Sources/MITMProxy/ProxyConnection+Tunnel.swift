import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// A CONNECT tunnel before interception: the peek at the first bytes, raw tunnels, server-speaks-first.
extension ProxyConnection {
    func peek(_ bytes: [UInt8]) {
        peeked.append(contentsOf: bytes)
        switch ClientHelloParser.parse(peeked) {
        case .needMoreData:
            return
        case .notTLS:
            clientSocket.pauseReading()
            if probe == .trust {
                close(reason: "the trust probe \(LocalPages.host) speaks only TLS")
                return
            }
            startRawTunnelDroppingPool()
        case .clientHello(let hello):
            clientSocket.pauseReading()
            let decision = probe == .trust ? .intercept(.trusted) : decide(hello)
            switch decision {
            case .intercept: break
            case .passThrough:
                passThrough()
                return
            case .refuse(let reason):
                close(reason: "refused by policy: \(reason)")
                return
            }
            clientHello = hello
            verdict = VerdictTracker(context: context, connectionID: id, host: interceptHost, port: connectPort,
                                     offeredALPN: hello.alpnProtocols, client: clientAddress, probe: probe,
                                     profile: decision.profile ?? .trusted)
            phase = .handshaking
            expect(.upstream(host: connectHost, port: connectPort), within: context.configuration.handshakeTimeout)
            if probe == .trust {
                answerTrustProbe()
            } else if let shared = sharedHTTP2Upstream(for: hello) {
                if case .pooled(let entry) = upstream { context.pool(for: loop).park(entry) }
                upstream = .none
                interceptSharing(shared)
            } else if case .deferred = upstream {
                startConnecting()
            } else if case .pooled(let entry) = upstream {
                upstream = .none
                interceptReusing(entry, hello: hello)
            } else if let outcome = upstream.outcome {
                intercept(hello, upstream: outcome)
            }
        case .malformed(let reason):
            let tracker = VerdictTracker(context: context, connectionID: id, host: connectHost, port: connectPort, offeredALPN: [],
                                         client: clientAddress, probe: probe)
            verdict = tracker
            tracker.observe(.handshakeFailed("the client sent a broken TLS ClientHello: \(reason)"))
            context.events.emit(.clientTLSFailed(connectionID: id, host: connectHost, port: connectPort,
                                                 reason: "the client sent a broken TLS ClientHello: \(reason)"))
            close(reason: "malformed ClientHello")
        }
    }

    /// The client's IP address, the unit of proof that the CA is trusted.
    var clientAddress: String? { clientSocket.peerHost }

    /// The policy's one decision for this tunnel, made before anything goes upstream.
    func decide(_ hello: ClientHello) -> TunnelDecision {
        let facts = TunnelFacts(connectHost: connectHost, connectPort: connectPort,
                                serverName: hello.serverName.flatMap { HostName.validate($0) }, offeredALPN: hello.alpnProtocols,
                                client: clientSocket.peerDescription)
        return context.configuration.tunnelPolicy.decide(facts)
    }

    /// Relays the tunnel untouched (ClientHello included): no certificate, no verdict.
    func passThrough() {
        passingThrough = true
        startRawTunnelDroppingPool()
    }

    /// A raw tunnel needs its own TCP connection: a pooled upstream has TLS on it, so it goes, and one is dialled.
    func startRawTunnelDroppingPool() {
        if case .pooled(let entry) = upstream {
            entry.leg.close()
            startConnecting()
        } else if case .deferred = upstream {
            startConnecting()
        }
        startRawTunnelWhenConnected()
    }

    func upstreamConnected(_ result: Result<UpstreamConnection, UpstreamFailure>) {
        upstream = UpstreamProgress(result)
        if passingThrough {
            startRawTunnelWhenConnected()
        } else if let hello = clientHello {
            intercept(hello, upstream: result)
        } else if case .notTLS = ClientHelloParser.parse(peeked), !peeked.isEmpty {
            startRawTunnelWhenConnected()
        } else if case .success(let connection) = result {
            let socket = connection.socket
            // Server-speaks-first protocols (SMTP, FTP) never send a ClientHello: watch the upstream too.
            let watcher = ServerFirstWatcher(owner: self)
            serverFirstWatcher = watcher
            socket.delegate = watcher
            socket.resumeReading()
        }
    }

    func upstreamSpokeFirst(_ bytes: [UInt8]) {
        guard case .peeking = phase, case .connected(let connection) = upstream else { return }
        connection.socket.pauseReading()
        startRawTunnel(upstream: connection.socket, initialDown: bytes)
    }

    func upstreamClosedWhilePeeking() {
        close(reason: "upstream \(connectHost):\(connectPort) closed the connection before the client spoke")
    }

    func startRawTunnelWhenConnected() {
        guard let outcome = upstream.outcome else { return }
        switch outcome {
        case .failure(let failure):
            context.events.emit(.upstreamFailed(connectionID: id, host: connectHost, port: connectPort, reason: failure.reason))
            guard Self.looksLikeHTTPRequest(peeked) else {
                close(reason: "upstream unreachable")
                return
            }
            // The 200 went out before the connect failed; a plain-HTTP client in the tunnel can still be told why.
            answerAndLinger(.badGateway(host: connectHost, port: connectPort, reason: failure.reason))
        case .success(let connection):
            startRawTunnel(upstream: connection.socket, initialDown: [])
        }
    }

    /// Whether a tunnel's first bytes start an HTTP/1 request line (`GET /`, `POST /x`).
    static func looksLikeHTTPRequest(_ bytes: [UInt8]) -> Bool {
        guard let space = bytes.prefix(24).firstIndex(of: UInt8(ascii: " ")), space > 0 else { return false }
        return bytes[..<space].allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    func startRawTunnel(upstream socket: any ByteStream, initialDown: [UInt8]) {
        let relay = RawRelay(client: PlainLeg(socket: clientSocket), upstream: PlainLeg(socket: socket))
        startRelaying(.raw(relay, tunnel: true))
        let initialUp = peeked
        peeked = []
        relay.start(initialUp: initialUp, initialDown: initialDown)
    }
}

/// Watches an upstream socket while the client has not spoken yet.
final class ServerFirstWatcher: StreamSocketDelegate {
    unowned let owner: ProxyConnection

    init(owner: ProxyConnection) { self.owner = owner }

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) { owner.upstreamSpokeFirst(Array(bytes)) }
    func socketDidReadEOF(_ socket: any ByteStream) { owner.upstreamClosedWhilePeeking() }
    func socket(_ socket: any ByteStream, didFail error: SystemCallError) { owner.upstreamClosedWhilePeeking() }
    func socketDidDrain(_ socket: any ByteStream) {}
}
