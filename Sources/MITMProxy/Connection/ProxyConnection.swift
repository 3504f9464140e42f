import Foundation
import MITMCore
import MITMIO
import MITMTLS
import MITMWebUI

/// One client connection to the proxy, from its first byte to its close: reads the proxy request,
/// answers CONNECT, peeks at the tunnel's first bytes, and sets up interception or a raw tunnel.
/// Confined to its loop.
final class ProxyConnection: ManagedConnection, StreamSocketDelegate, RelayOwner {
    /// The relay a connection ends up in.
    enum Relay {
        case http1(HTTPRelay)
        case http2(HTTP2Relay)
        /// Raw bytes: a tunnel that is not intercepted, or a connection after an upgrade.
        case raw(RawRelay)
        /// The web UI, requested directly (`GET / HTTP/1.1`), or anything on the web UI's own port.
        case web(WebConnection)
    }

    typealias Life = ConnectionLife<ProxyConnectionParts>
    typealias Relayed = Life.Relayed

    let id: Int
    let context: ProxyContext
    let loop: EventLoop
    /// The client's socket, or it seen through a throttled link (see `enterNetworkConditions`).
    var clientSocket: any ByteStream
    /// Whether the connection came to the web UI's own port: every request is the web UI's.
    let webUIOnly: Bool
    /// The origin of the `--reverse` port the connection came to: the client speaks TLS to it at once.
    let reverseTarget: ReverseTarget?
    /// Set when the connection came to the transparent listener: where the system redirected it from.
    let transparent: TransparentArrival?
    /// Where the connection is in its life, with what that part of it holds and its deadline.
    private(set) var life: Life
    var parser = HTTP1Parser(role: .request)
    /// The lookup of the client's process, when it is on this machine and lookups are on.
    var processLookup: ClientProcessLookup?
    /// Holds the `407` for credentials that its address got wrong again and again (`CredentialBackoff`).
    var credentialWait: (any ClockTimer)?
    /// The address of a client on another machine, which may not reach this machine's services; nil when it may.
    lazy var guardedClient: String? = {
        if let replay = context.replays.tag(forPeer: clientSocket.peerDescription) { return replay.guardedClient }
        return context.guardedClient(forClient: clientAddress)
    }()

    convenience init(
        descriptor: Int32, peer: SocketAddress?, context: ProxyContext, loop: EventLoop, webUIOnly: Bool = false,
        reverseTarget: ReverseTarget? = nil, transparent: TransparentArrival? = nil
    ) {
        self.init(
            client: StreamSocket(descriptor: descriptor, peer: peer, loop: loop), context: context,
            webUIOnly: webUIOnly,
            reverseTarget: reverseTarget, transparent: transparent)
    }

    /// A connection from the client at the other end of `client`, on the stream's loop.
    init(
        client: any ByteStream, context: ProxyContext, webUIOnly: Bool = false, reverseTarget: ReverseTarget? = nil,
        transparent: TransparentArrival? = nil
    ) {
        self.webUIOnly = webUIOnly
        self.reverseTarget = reverseTarget
        self.transparent = transparent
        self.id = context.makeConnectionID()
        self.context = context
        self.loop = client.loop
        self.clientSocket = client
        let configuration = context.configuration
        let timeouts = Life.Timeouts(
            handshake: configuration.handshakeTimeout, idle: configuration.idleTimeout,
            upstreamPark: configuration.upstreamParkDelay)
        self.life = Life(timeouts: timeouts, now: context.clock.now())
    }

    deinit { clientSocket.detach(self) }

    var isClosed: Bool { life.isClosed }

    /// The HTTP/1 relay, while relaying HTTP/1.
    var httpRelay: HTTPRelay? {
        if case .relaying(.http1(let relay), _) = life.state { relay } else { nil }
    }

    /// Whether the tunnel's first bytes are being read.
    var isPeeking: Bool {
        if case .peeking = life.state { true } else { false }
    }

    /// Takes `event` into the connection's life and performs what it says.
    func receive(_ event: consuming Life.Event) { perform(life.receive(event)) }

    func start() {
        context.registry(for: loop).add(self)
        startProcessLookup()
        clientSocket.delegate = self
        if let reverseTarget {
            openTunnel(
                host: reverseTarget.host, port: reverseTarget.port, request: .reverse, asksForPins: false, leftover: [])
            // A client on another machine waits until the target is known to be allowed (`targetReached` reads on).
            guard isPeeking else { return }
        }
        if let transparent {
            openTransparentTunnel(transparent)
            guard isPeeking else { return }
        }
        if let processLookup {
            // Answered only once its process is known, the client cannot exit before it is looked up.
            processLookup.whenDone { [weak self] _, _ in
                guard let self, !isClosed else { return }
                clientSocket.resumeReading()
            }
            return
        }
        clientSocket.resumeReading()
    }

    // MARK: ManagedConnection

    var deadline: UInt64 { life.deadline?.at ?? .max }

    func timedOut() { receive(.deadlinePassed(now: context.clock.now())) }

    func closeForShutdown() { close(reason: "proxy stopping") }

    func sweep(now: UInt64) {
        if case .relaying(let relay, _) = life.state { relay.sweepBreakpoints(now: now) }
        receive(.swept(now: now))
    }

    // MARK: client socket before hand-off

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        switch life.state {
        case .readingRequest where startsSOCKS5(bytes):
            readSOCKS5(
                SOCKS5Handshake(requiresCredentials: context.configuration.proxyCredentials != nil),
                Array(bytes))
        case .readingRequest where startsSOCKS4(bytes): refuseSOCKS4()
        case .readingRequest: readRequest(Array(bytes))
        case .negotiatingSOCKS(let handshake, _): readSOCKS5(handshake, Array(bytes))
        case .peeking(let tunnel, _, _): peek(tunnel, Array(bytes))
        case .awaitingRawUpstream(let tunnel, _, _): tunnel.peeked.append(contentsOf: bytes)
        // Read after the hand-off, or while the client is not read (its bytes wait in the socket).
        case .awaitingTarget, .reachingUpstream, .upstreamHandshake, .clientHandshake, .overlapping, .relaying,
            .lingering, .closing,
            .closed:
            return
        }
    }

    func socketDidReadEOF(_ socket: any ByteStream) {
        if case .peeking(let tunnel, _, _) = life.state, !tunnel.peeked.isEmpty {
            context.events.emit(
                .clientTLSFailed(
                    connectionID: id, host: tunnel.host, port: tunnel.port,
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
        guard case .requestHead(let head, _)? = events.first else { return }
        if let web = context.web, webUIOnly || (head.method != "CONNECT" && head.target.hasPrefix("/")) {
            startWebUI(web, events)
            return
        }
        guard head.method == "CONNECT" else {
            startPlainRelay(events)
            return
        }
        guard case .authority(let host, let port)? = try? RequestTarget.parse(head.target, method: "CONNECT") else {
            let reason =
                (try? RequestTarget.parse(head.target, method: "CONNECT")).map { _ in "" }
                ?? connectTargetError(head.target)
            reject(status: 400, reason: reason)
            return
        }
        if let problem = context.authenticationProblem(head) {
            context.events.emit(
                .badRequest(
                    connectionID: id, peer: clientSocket.peerDescription, reason: "CONNECT \(head.target): \(problem)"))
            refuseCredentials(head, problem: problem)
            return
        }
        context.noteCredentialsAccepted(client: clientAddress)
        openTunnel(
            host: host, port: port, request: .httpConnect, asksForPins: head.headers.contains(ProxyProbe.headerName),
            leftover: parser.takeBufferedBytes())
    }

    /// Opens the tunnel a CONNECT or a SOCKS5 request asked for; `leftover` are bytes the client sent behind its request.
    func openTunnel(host: String, port: Int, request: TunnelRequest, asksForPins: Bool, leftover: [UInt8]) {
        if context.ownListener.isOwn(host: host, port: port) {
            refuse(request, status: 508, reason: OwnListener.loopReason(host: host, port: port))
            return
        }
        let peer = clientSocket.peerDescription
        context.events.emit(.connectionOpened(connectionID: id, host: host, port: port, peer: peer))
        guard enterNetworkConditions(host: host, port: port) else { return }
        let probe: ProxyProbe? = LocalPages.handles(host: host) ? .trust : asksForPins ? .pins : nil
        let tunnel = Tunnel(host: host, port: port, probe: probe, request: request, started: context.clock.wallNow())
        let answeringRule =
            probe == .trust ? nil : context.rules.current.answersEveryRequest(host: host, scheme: "https")
        var pooled =
            probe == .trust || answeringRule != nil ? nil : context.pool(for: loop).take(host: host, port: port)
        if let entry = pooled, guardedClient != nil, LocalTargetGuard.isThisMachine(entry.address) {
            // Opened for a client on this machine; this client may not have it, and dialling tells it why.
            entry.leg.close()
            pooled = nil
        }
        let upstream: Life.UpstreamProgress
        if probe == .trust {
            // Answered by the proxy itself: never dialled upstream.
            upstream = .none
        } else if let rule = answeringRule {
            tunnel.answeredByRule = rule
            upstream = .none
        } else if let entry = pooled {
            upstream = .pooled(entry)
        } else if guardedClient == nil, context.pool(for: loop).hasSharedHTTP2(host: host, port: port) {
            upstream = .deferred
        } else if guardedClient != nil {
            tunnel.peeked = leftover
            let attempt = dial(host: host, port: port)
            receive(
                .targetAwaited(tunnel, TunnelTarget(host: host, port: port), dialled: attempt, now: context.clock.now())
            )
            clientSocket.pauseReading()
            return
        } else {
            upstream = .connecting(dial(host: host, port: port))
        }
        answerConnect(tunnel, upstream: upstream, heldBytes: leftover)
    }

    private static let connectionEstablished = Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8)

    /// Says `200` to the CONNECT (or succeeded to the SOCKS5 request) and starts peeking at the tunnel, first at
    /// `heldBytes` (sent right behind the request), while `upstream` is reached.
    func answerConnect(_ tunnel: Tunnel, upstream: Life.UpstreamProgress, heldBytes: [UInt8]) {
        writeAnswer(tunnel.request)
        receive(
            .tunnelAnswered(
                tunnel, TunnelTarget(host: tunnel.host, port: tunnel.port), upstream: upstream, now: context.clock.now()
            ))
        if !heldBytes.isEmpty { peek(tunnel, heldBytes) }
    }

    private func writeAnswer(_ request: TunnelRequest) {
        switch request {
        case .httpConnect: clientSocket.write(Self.connectionEstablished)
        case .socks5: clientSocket.write(SOCKS5Handshake.reply(.succeeded))
        case .reverse, .transparent: break
        }
    }

    /// Starts reaching `host:port`; the connection's life learns how it ends.
    func dial(host: String, port: Int) -> any UpstreamAttempt {
        context.dialer.dial(host: host, port: port, guardedClient: guardedClient, context: context, loop: loop) {
            [unowned self] result in
            switch result {
            case .success(let connection): receive(.upstreamConnected(connection))
            case .failure(let failure): receive(.upstreamFailed(failure))
            }
        }
    }

    func startConnecting(host: String, port: Int) { receive(.upstreamDialled(dial(host: host, port: port))) }

    /// The upstream of a CONNECT that waited for it: `403` for a target on this machine; otherwise the `200`, then on as
    /// any tunnel whose upstream was reached before the client spoke (a failure is told inside the tunnel, as usual).
    func targetReached(_ tunnel: Tunnel, failure: UpstreamFailure?) {
        if let failure, failure.refusedLocalTarget {
            refuse(tunnel.request, status: 403, reason: failure.reason)
            return
        }
        let held = tunnel.takePeeked()
        writeAnswer(tunnel.request)
        receive(.targetAnswered(now: context.clock.now()))
        if !held.isEmpty, isPeeking { peek(tunnel, held) }
        if !isClosed { clientSocket.resumeReading() }
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
        closeAfterLastBytes()
    }

    /// FIN after what is written, then waits (briefly) for the client to hang up.
    func closeAfterLastBytes() {
        clientSocket.shutdownWriteAfterFlush()
        clientSocket.resumeReading()
        linger()
    }

    /// Waits (at most 2 s) for the client to hang up after the proxy's last byte: closing with unread input
    /// would reset the connection and could destroy the response in flight.
    func linger() { receive(.linger(seconds: 2, now: context.clock.now())) }

    func startPlainRelay(_ events: [HTTP1Event]) {
        if case .requestHead(let head, _)? = events.first,
            case .absolute(let url)? = try? RequestTarget.parse(head.target, method: head.method),
            !enterNetworkConditions(host: url.host, port: url.port)
        {
            return
        }
        let relay = HTTPRelay(
            connectionID: id, context: context, loop: loop, client: PlainLeg(socket: clientSocket),
            parser: parser, mode: .plain)
        startRelaying(.http1(relay), for: .plainRequests)
        relay.start(initialEvents: events)
    }

    func startWebUI(_ web: WebUI, _ events: [HTTP1Event]) {
        let connection = WebConnection(web: web, client: clientSocket, parser: parser, onWebPort: webUIOnly)
        startRelaying(.web(connection), for: .webUI)
        connection.start(initialEvents: events)
    }

    // MARK: lifecycle

    /// Relays with `relay`, which reports to this connection from now on.
    func startRelaying(_ relay: Relay, for relayed: Relayed) {
        let headDeadline: UInt64? = if case .http1(let relay) = relay { relay.headDeadline } else { nil }
        receive(.relayStarted(relay, for: relayed, headDeadline: headDeadline, now: context.clock.now()))
        relay.setOwner(self)
    }

    func relayActivity(headDeadline: UInt64?) {
        receive(.relayActivity(headDeadline: headDeadline, now: context.clock.now()))
    }

    func relayLingering() { linger() }

    func relayUpgraded(to raw: RawRelay) {
        receive(.relayUpgraded(.raw(raw), now: context.clock.now()))
        raw.owner = self
    }

    func relayClosed(reason: String) { receive(.relayClosed(reason: reason)) }

    func close(reason: String) { receive(.close(reason: reason)) }
}

extension ProxyConnection: WebConnectionOwner {
    func webActivity() { relayActivity(headDeadline: nil) }

    func webLingering() { relayLingering() }

    func webClosed(reason: String) { relayClosed(reason: reason) }
}

extension ProxyConnection.Relay {
    func setOwner(_ owner: any RelayOwner & WebConnectionOwner) {
        switch self {
        case .http1(let relay): relay.owner = owner
        case .http2(let relay): relay.owner = owner
        case .raw(let relay): relay.owner = owner
        case .web(let connection): connection.owner = owner
        }
    }

    func close(reason: String) {
        switch self {
        case .http1(let relay): relay.close(reason: reason)
        case .http2(let relay): relay.close(reason: reason)
        case .raw(let relay): relay.close(reason: reason)
        case .web(let connection): connection.close(reason: reason)
        }
    }

    /// Gives back grown buffers of an idle HTTP relay (a raw relay holds none).
    func compactIfIdle() {
        switch self {
        case .http1(let relay): relay.compactIfIdle()
        case .http2(let relay): relay.compactIfIdle()
        case .raw, .web: break
        }
    }
}
