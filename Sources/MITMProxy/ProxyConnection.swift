import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// One client connection to the proxy, from its first byte to its close: reads the proxy request,
/// answers CONNECT, peeks at the tunnel's first bytes, and sets up interception or a raw tunnel.
/// Confined to its loop.
final class ProxyConnection: ManagedConnection, StreamSocketDelegate, RelayOwner {
    /// Where the connection is in its life; every phase has a deadline (`deadline`), set on entering it.
    enum Phase {
        /// Reading the proxy request.
        case readingRequest
        /// CONNECT answered: reading the tunnel's first bytes while the upstream is reached.
        case peeking
        /// Intercepting: the upstream's TLS handshake, then the client's.
        case handshaking
        /// Relaying HTTP/1, HTTP/2 or raw bytes.
        case relaying(Relay)
        /// The proxy's last byte is written; waiting for the client to hang up.
        case lingering
        case closed
    }

    /// The relay a connection ends up in.
    enum Relay {
        case http1(HTTPRelay)
        case http2(HTTP2Relay)
        /// Raw bytes: a tunnel that is not intercepted (`tunnel`), or a connection after an upgrade.
        case raw(RawRelay, tunnel: Bool)
    }

    let id: Int
    let context: ProxyContext
    let loop: EventLoop
    let clientSocket: any ByteStream
    var phase = Phase.readingRequest
    var parser = HTTP1Parser(role: .request)
    var timeout: ConnectionDeadline
    var connectHost = ""
    var connectPort = 0
    var peeked: [UInt8] = []
    var clientHello: ClientHello?
    var upstream = UpstreamProgress.none
    var upstreamHandshakeStarted = Date()
    var upstreamLeg: TLSLeg?
    var clientLeg: TLSLeg?
    var serverFirstWatcher: ServerFirstWatcher?
    var verdict: VerdictTracker?
    var upstreamHandshakeMilliseconds: Double = -1
    /// Whether buffers were already given back since the last activity.
    var compacted = false
    /// When bytes last moved (monotonic nanoseconds).
    var lastActivity: UInt64 = 0
    var upstreamCertificate: X509Certificate?
    var reusedUpstreamAddress: String?
    /// The pooled HTTP/2 upstream connection this client shares with others, when it does.
    var sharedUpstream: SharedHTTP2Upstream?
    /// Set when the connection checks the proxy itself rather than carrying the app's traffic.
    var probe: ProxyProbe?
    /// The policy let this tunnel pass through untouched.
    var passingThrough = false

    convenience init(descriptor: Int32, context: ProxyContext, loop: EventLoop) {
        self.init(client: StreamSocket(descriptor: descriptor, loop: loop), context: context)
    }

    /// A connection from the client at the other end of `client`, on the stream's loop.
    init(client: any ByteStream, context: ProxyContext) {
        self.id = context.makeConnectionID()
        self.context = context
        self.loop = client.loop
        self.clientSocket = client
        self.timeout = .after(context.configuration.handshakeTimeout, .proxyRequest, on: context.clock)
    }

    var isClosed: Bool {
        if case .closed = phase { true } else { false }
    }

    /// The HTTP/1 relay, while relaying HTTP/1.
    var httpRelay: HTTPRelay? {
        if case .relaying(.http1(let relay)) = phase { relay } else { nil }
    }

    /// Waits at most `seconds` for what `reason` names.
    func expect(_ reason: TimeoutReason, within seconds: Double) {
        timeout = .after(seconds, reason, on: context.clock)
    }

    func start() {
        context.registry(for: loop).add(self)
        clientSocket.delegate = self
        clientSocket.resumeReading()
    }

    // MARK: ManagedConnection

    var deadline: UInt64 { timeout.at }

    func timedOut() {
        if case .connecting = upstream {
            // The upstream connect has its own timer (the same timeout) and answers the client with a 502.
            timeout.at = context.clock.after(seconds: 1)
            return
        }
        let handshakeTimeout = SecondsText.format(context.configuration.handshakeTimeout)
        switch phase {
        case .handshaking where clientLeg == nil && upstreamLeg?.isHandshaking == true:
            // The upstream accepted the connection but never finished TLS: a 502 for the client, like any upstream failure.
            upstreamLeg?.onHandshake = nil
            upstreamLeg?.close()
            upstreamLeg = nil
            upstreamFailedBeforeForging("TLS handshake timed out (no answer within \(handshakeTimeout))")
        case .relaying where timeout.reason == .lingering:
            close(reason: "done")
        case .relaying(.http1(let relay)):
            if relay.answerSlowHead(now: context.clock.now()) || relay.answerTimeout(after: context.configuration.idleTimeout) { return }
            close(reason: "idle for \(SecondsText.format(context.configuration.idleTimeout))")
        case .relaying:
            close(reason: "idle for \(SecondsText.format(context.configuration.idleTimeout))")
        case .closed:
            return
        case .lingering:
            close(reason: "timed out \(timeout.reason.waitingFor)")
        case .readingRequest, .peeking, .handshaking:
            context.events.emit(.timedOut(connectionID: id, host: connectHost.isEmpty ? nil : connectHost, what: timeout.reason.waitingFor))
            if case .handshaking = phase, clientLeg != nil {
                context.events.emit(.clientTLSFailed(connectionID: id, host: interceptHost, port: connectPort,
                                                     reason: "the client did not finish the TLS handshake within \(handshakeTimeout)"))
            }
            close(reason: "timed out \(timeout.reason.waitingFor)")
        }
    }

    func closeForShutdown() { close(reason: "proxy stopping") }

    /// Bytes moved while relaying: the idle deadline (or a request head's, if sooner) starts again.
    func touch() {
        lastActivity = context.clock.now()
        let idle = Clock.after(seconds: context.configuration.idleTimeout, from: lastActivity)
        timeout = ConnectionDeadline(at: min(idle, httpRelay?.headDeadline ?? .max), reason: .idle)
        compacted = false
    }

    func sweep(now: UInt64) {
        let silentForASecond = now >= lastActivity && now - lastActivity >= 1_000_000_000
        guard case .relaying(let relay) = phase, silentForASecond, !compacted else { return }
        compacted = true
        relay.compactIfIdle()
    }

    // MARK: client socket before hand-off

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        switch phase {
        case .readingRequest: readRequest(Array(bytes))
        case .peeking: peek(Array(bytes))
        case .handshaking, .relaying, .lingering, .closed: return
        }
    }

    func socketDidReadEOF(_ socket: any ByteStream) {
        if case .peeking = phase, !peeked.isEmpty, clientHello == nil {
            context.events.emit(.clientTLSFailed(connectionID: id, host: connectHost, port: connectPort,
                                                 reason: "the client closed the tunnel in the middle of its first message"))
        }
        close(reason: "client closed the connection")
    }

    func socket(_ socket: any ByteStream, didFail error: SystemCallError) { close(reason: "client: \(error)") }

    func socketDidDrain(_ socket: any ByteStream) {}

    func readRequest(_ bytes: [UInt8]) {
        let events: [HTTP1Event]
        do {
            events = try parser.feed(bytes)
        } catch {
            reject(status: error.suggestedStatus, reason: error.reason)
            return
        }
        guard case .requestHead(let head)? = events.first else { return }
        guard head.method == "CONNECT" else {
            startPlainRelay(events)
            return
        }
        guard case .authority(let host, let port)? = try? RequestTarget.parse(head.target, method: "CONNECT") else {
            let reason = (try? RequestTarget.parse(head.target, method: "CONNECT")).map { _ in "" } ?? connectTargetError(head.target)
            reject(status: 400, reason: reason)
            return
        }
        if context.ownListener.isOwn(host: host, port: port) {
            reject(status: 508, reason: OwnListener.loopReason(host: host, port: port))
            return
        }
        connectHost = host
        connectPort = port
        let peer = clientSocket.peerDescription
        context.events.emit(.connectionOpened(connectionID: id, host: host, port: port, peer: peer))
        let leftover = parser.takeBufferedBytes()
        clientSocket.write(Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8))
        phase = .peeking
        expect(.firstTunnelBytes(host: host, port: port), within: context.configuration.handshakeTimeout)
        probe = LocalPages.handles(host: host) ? .trust : head.headers.contains(ProxyProbe.headerName) ? .pins : nil
        if probe == .trust {
            // Answered by the proxy itself: never dialled upstream.
        } else if let entry = context.pool(for: loop).take(host: host, port: port) {
            upstream = .pooled(entry)
        } else if context.pool(for: loop).hasSharedHTTP2(host: host, port: port) {
            upstream = .deferred
        } else {
            startConnecting()
        }
        if !leftover.isEmpty { peek(leftover) }
    }

    func startConnecting() {
        upstream = .connecting(context.dialer.dial(host: connectHost, port: connectPort, context: context, loop: loop) { [unowned self] result in
            upstreamConnected(result)
        })
    }

    /// The ALPN protocols offered to the upstream for a client that offered `clientOffer`.
    func upstreamALPN(for clientOffer: [String]) -> [String] { ALPNPolicy.upstreamOffer(clientOffered: clientOffer) }

    func connectTargetError(_ target: String) -> String {
        do {
            _ = try RequestTarget.parse(target, method: "CONNECT")
            return "bad CONNECT target"
        } catch {
            return error.reason
        }
    }

    func reject(status: Int, reason: String) {
        let peer = clientSocket.peerDescription
        context.events.emit(.badRequest(connectionID: id, peer: peer, reason: reason))
        answerAndLinger(.error(status: status, reason: reason))
    }

    /// Writes `response`, then FIN, and waits (at most 2 s) for the client to hang up.
    func answerAndLinger(_ response: LocalResponse) {
        clientSocket.write(response.head(keepAlive: false).serialized() + response.body)
        clientSocket.shutdownWriteAfterFlush()
        clientSocket.resumeReading()
        linger()
    }

    /// Waits (at most 2 s) for the client to hang up after the proxy's last byte: closing with unread input
    /// would reset the connection and could destroy the response in flight.
    /// A relay keeps its phase while lingering: it still reads, and closes on the client's FIN.
    func linger() {
        if case .relaying = phase {} else { phase = .lingering }
        expect(.lingering, within: 2)
    }

    func startPlainRelay(_ events: [HTTP1Event]) {
        let relay = HTTPRelay(connectionID: id, context: context, loop: loop, client: PlainLeg(socket: clientSocket),
                              parser: parser, mode: .plain)
        startRelaying(.http1(relay))
        relay.start(initialEvents: events)
    }

    // MARK: lifecycle

    /// Enters `.relaying` with `relay`, which reports to this connection from now on.
    func startRelaying(_ relay: Relay) {
        phase = .relaying(relay)
        relay.setOwner(self)
        touch()
    }

    func relayActivity() { touch() }

    func relayLingering() { linger() }

    func relayUpgraded(to raw: RawRelay) {
        startRelaying(.raw(raw, tunnel: false))
    }

    func relayClosed(reason: String) {
        if case .relaying(.raw(let relay, tunnel: true)) = phase {
            context.events.emit(.tunnel(connectionID: id, host: connectHost, port: connectPort,
                                        bytesUp: relay.bytesUp, bytesDown: relay.bytesDown, reason: reason))
        }
        guard !isClosed else { return }
        verdict?.finish()
        phase = .closed
        context.registry(for: loop).remove(self)
    }

    func close(reason: String) {
        guard !isClosed else { return }
        if case .relaying(let relay) = phase {
            // The relay reports back through `relayClosed`, which ends the phase.
            relay.close(reason: reason)
        }
        verdict?.finish()
        phase = .closed
        switch upstream {
        case .connecting(let attempt): attempt.cancel()
        case .pooled(let entry): entry.leg.close()
        case .connected(let connection): connection.socket.close()
        case .none, .deferred, .failed: break
        }
        upstream = .none
        clientLeg?.close()
        upstreamLeg?.close()
        clientSocket.close()
        context.registry(for: loop).remove(self)
    }
}

extension ProxyConnection.Relay {
    func setOwner(_ owner: RelayOwner) {
        switch self {
        case .http1(let relay): relay.owner = owner
        case .http2(let relay): relay.owner = owner
        case .raw(let relay, _): relay.owner = owner
        }
    }

    func close(reason: String) {
        switch self {
        case .http1(let relay): relay.close(reason: reason)
        case .http2(let relay): relay.close(reason: reason)
        case .raw(let relay, _): relay.close(reason: reason)
        }
    }

    /// Gives back grown buffers of an idle HTTP relay (a raw relay holds none).
    func compactIfIdle() {
        switch self {
        case .http1(let relay): relay.compactIfIdle()
        case .http2(let relay): relay.compactIfIdle()
        case .raw: break
        }
    }
}
