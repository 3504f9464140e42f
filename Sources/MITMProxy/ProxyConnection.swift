import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// One client connection to the proxy, from its first byte to its close: reads the proxy request,
/// answers CONNECT, peeks at the tunnel's first bytes, and sets up interception or a raw tunnel.
/// Confined to its loop.
final class ProxyConnection: ManagedConnection, StreamSocketDelegate {
    enum Phase {
        case readingRequest
        case peeking
        case handshaking
        case relaying
        case closed
    }

    let id: Int
    let context: ProxyContext
    let loop: EventLoop
    let clientSocket: StreamSocket
    var phase = Phase.readingRequest
    var parser = HTTP1Parser(role: .request)
    var deadline: UInt64
    var connectHost = ""
    var connectPort = 0
    var peeked: [UInt8] = []
    var clientHello: ClientHello?
    var connector: UpstreamConnector?
    var upstreamResult: Result<UpstreamConnection, UpstreamFailure>?
    var upstreamHandshakeStarted = Date()
    var upstreamLeg: TLSLeg?
    var clientLeg: TLSLeg?
    var httpRelay: HTTPRelay?
    var http2Relay: HTTP2Relay?
    var rawRelay: RawRelay?
    var timeoutWhat = "reading the proxy request"
    var serverFirstWatcher: ServerFirstWatcher?
    var verdict: VerdictTracker?
    var upstreamHandshakeMilliseconds: Double = -1
    /// Whether buffers were already given back since the last activity.
    var compacted = false
    /// When bytes last moved (monotonic nanoseconds).
    var lastActivity: UInt64 = 0
    var pooled: PooledUpstream?
    var upstreamCertificate: X509Certificate?
    var reusedUpstreamAddress: String?
    /// Set when the connection checks the proxy itself rather than carrying the app's traffic.
    var probe: ProxyProbe?
    /// The policy let this tunnel pass through untouched.
    var passingThrough = false

    init(descriptor: Int32, context: ProxyContext, loop: EventLoop) {
        self.id = context.makeConnectionID()
        self.context = context
        self.loop = loop
        self.clientSocket = StreamSocket(descriptor: descriptor, loop: loop)
        self.deadline = Clock.after(seconds: context.configuration.handshakeTimeout)
    }

    func start() {
        context.registry(for: loop).add(self)
        clientSocket.delegate = self
        clientSocket.resumeReading()
    }

    // MARK: ManagedConnection

    func timedOut() {
        if connector != nil {
            // The upstream connect has its own timer (the same timeout) and answers the client with a 502.
            deadline = Clock.after(seconds: 1)
            return
        }
        if phase == .handshaking, clientLeg == nil, let leg = upstreamLeg, leg.isHandshaking {
            // The upstream accepted the connection but never finished TLS: a 502 for the client, like any upstream failure.
            leg.onHandshake = nil
            leg.close()
            upstreamLeg = nil
            upstreamFailedBeforeForging("TLS handshake timed out (no answer within \(SecondsText.format(context.configuration.handshakeTimeout)))")
            return
        }
        switch phase {
        case .relaying:
            if httpRelay?.answerSlowHead(now: Clock.now) == true { return }
            if httpRelay?.answerTimeout(after: context.configuration.idleTimeout) == true { return }
            close(reason: "idle for \(SecondsText.format(context.configuration.idleTimeout))")
        case .closed:
            return
        default:
            context.events.emit(.timedOut(connectionID: id, host: connectHost.isEmpty ? nil : connectHost, what: timeoutWhat))
            if phase == .handshaking && clientLeg != nil {
                context.events.emit(.clientTLSFailed(connectionID: id, host: interceptHost, port: connectPort,
                                                     reason: "the client did not finish the TLS handshake within \(SecondsText.format(context.configuration.handshakeTimeout))"))
            }
            close(reason: "timed out \(timeoutWhat)")
        }
    }

    func closeForShutdown() { close(reason: "proxy stopping") }

    func touch() {
        lastActivity = Clock.now
        deadline = min(Clock.after(seconds: context.configuration.idleTimeout, from: lastActivity), httpRelay?.headDeadline ?? .max)
        compacted = false
    }

    func sweep(now: UInt64) {
        let silentForASecond = now >= lastActivity && now - lastActivity >= 1_000_000_000
        guard phase == .relaying, silentForASecond, !compacted else { return }
        compacted = true
        httpRelay?.compactIfIdle()
        http2Relay?.compactIfIdle()
    }

    // MARK: client socket before hand-off

    func socket(_ socket: StreamSocket, didRead bytes: UnsafeRawBufferPointer) {
        switch phase {
        case .readingRequest: readRequest(Array(bytes))
        case .peeking: peek(Array(bytes))
        default: return
        }
    }

    func socketDidReadEOF(_ socket: StreamSocket) {
        if phase == .peeking && !peeked.isEmpty && clientHello == nil {
            context.events.emit(.clientTLSFailed(connectionID: id, host: connectHost, port: connectPort,
                                                 reason: "the client closed the tunnel in the middle of its first message"))
        }
        close(reason: "client closed the connection")
    }

    func socket(_ socket: StreamSocket, didFail error: SystemCallError) { close(reason: "client: \(error)") }

    func socketDidDrain(_ socket: StreamSocket) {}

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
        let peer = SocketAddress.peer(of: clientSocket.descriptor)?.description ?? "client"
        context.events.emit(.connectionOpened(connectionID: id, host: host, port: port, peer: peer))
        let leftover = parser.takeBufferedBytes()
        clientSocket.write(Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8))
        phase = .peeking
        timeoutWhat = "waiting for the client's first bytes in the tunnel to \(host):\(port)"
        probe = LocalPages.handles(host: host) ? .trust : head.headers.contains(ProxyProbe.headerName) ? .pins : nil
        if probe == .trust {
            // Answered by the proxy itself: never dialled upstream.
        } else if let entry = context.pool(for: loop).take(host: host, port: port) {
            pooled = entry
        } else {
            startConnecting()
        }
        if !leftover.isEmpty { peek(leftover) }
    }

    func startConnecting() {
        connector = UpstreamConnector.connect(host: connectHost, port: connectPort, context: context, loop: loop) { [unowned self] result in
            connector = nil
            upstreamConnected(result)
        }
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
        let peer = SocketAddress.peer(of: clientSocket.descriptor)?.description ?? "client"
        context.events.emit(.badRequest(connectionID: id, peer: peer, reason: reason))
        answerAndLinger(.error(status: status, reason: reason))
    }

    /// Writes `response`, then FIN, and waits (at most 2 s) for the client to hang up.
    func answerAndLinger(_ response: LocalResponse) {
        clientSocket.write(response.head(keepAlive: false).serialized() + response.body)
        clientSocket.shutdownWriteAfterFlush()
        clientSocket.resumeReading()
        phase = .handshaking
        timeoutWhat = "closing after an error response"
        deadline = Clock.after(seconds: 2)
    }

    func startPlainRelay(_ events: [HTTP1Event]) {
        phase = .relaying
        touch()
        let relay = HTTPRelay(connectionID: id, context: context, loop: loop, client: PlainLeg(socket: clientSocket),
                              parser: parser, mode: .plain)
        adopt(relay)
        relay.start(initialEvents: events)
    }

    // MARK: lifecycle

    func adopt(_ relay: HTTPRelay) {
        httpRelay = relay
        relay.onActivity = { [unowned self] in touch() }
        relay.onLinger = { [unowned self] in deadline = Clock.after(seconds: 2) }
        relay.onClose = { [unowned self] _ in finished() }
        relay.onUpgrade = { [unowned self] raw in
            httpRelay = nil
            rawRelay = raw
            raw.onActivity = { [unowned self] in touch() }
            raw.onClose = { [unowned self] _ in finished() }
        }
    }

    func finished() {
        guard phase != .closed else { return }
        verdict?.finish()
        phase = .closed
        context.registry(for: loop).remove(self)
    }

    func close(reason: String) {
        guard phase != .closed else { return }
        verdict?.finish()
        phase = .closed
        connector?.cancel()
        pooled?.leg.close()
        pooled = nil
        httpRelay?.close(reason: reason)
        http2Relay?.close(reason: reason)
        rawRelay?.close(reason: reason)
        clientLeg?.close()
        upstreamLeg?.close()
        if case .success(let connection)? = upstreamResult { connection.socket.close() }
        clientSocket.close()
        context.registry(for: loop).remove(self)
    }
}
