import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// One client connection to the proxy, from its first byte to its close: reads the proxy request,
/// answers CONNECT, peeks at the tunnel's first bytes, and sets up interception or a raw tunnel.
/// Confined to its loop.
final class ProxyConnection: ManagedConnection, StreamSocketDelegate, RelayOwner {
    /// Where the connection is in its life, with what that part of it needs; every phase has a deadline
    /// (`timeout`), set on entering it.
    enum Phase {
        /// Reading the proxy request.
        case readingRequest
        /// A SOCKS5 client's greeting, authentication and request (the first byte told it from HTTP).
        case socksHandshake(SOCKS5Handshake)
        /// CONNECT from a client on another machine, not answered yet: the upstream is reached first, so that a target on
        /// this machine gets a `403` instead of a `200` (`refusesLocalTargets`). The client is not read meanwhile; bytes it
        /// sent right behind the CONNECT wait in the tunnel's `peeked`.
        case awaitingTarget(Tunnel)
        /// CONNECT answered: reading the tunnel's first bytes while the upstream is reached.
        case peeking(Tunnel)
        /// The tunnel is relayed as it is once its upstream answers: the policy passes it through, or it is not TLS.
        case awaitingRawUpstream(Tunnel)
        /// Intercepting: the upstream's TLS handshake, then the client's.
        case handshaking(Interception)
        /// Relaying HTTP/1, HTTP/2 or raw bytes of plain requests, a raw tunnel or an interception.
        case relaying(Relay, for: Relayed)
        /// The proxy's last byte is written; waiting for the client to hang up.
        case lingering
        case closed
    }

    /// The relay a connection ends up in.
    enum Relay {
        case http1(HTTPRelay)
        case http2(HTTP2Relay)
        /// Raw bytes: a tunnel that is not intercepted, or a connection after an upgrade.
        case raw(RawRelay)
        /// The web UI, requested directly (`GET / HTTP/1.1`), or anything on the web UI's own port.
        case web(WebConnection)
    }

    /// What a relay carries.
    enum Relayed {
        /// Absolute-form requests to plain HTTP origins.
        case plainRequests
        /// A CONNECT tunnel relayed untouched.
        case tunnel(Tunnel)
        case interception(Interception)
        /// Requests to the web UI.
        case webUI
    }

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
    var phase = Phase.readingRequest
    var parser = HTTP1Parser(role: .request)
    var timeout: ConnectionDeadline
    /// Whether buffers were already given back since the last activity.
    var compacted = false
    /// Whether the sweep already offered the relay's idle upstream to the pool since the last activity.
    var offeredIdleUpstream = false
    /// When bytes last moved (monotonic nanoseconds).
    var lastActivity: UInt64 = 0
    /// The lookup of the client's process, when it is on this machine and lookups are on.
    var processLookup: ClientProcessLookup?
    /// Holds the `407` for credentials that its address got wrong again and again (`CredentialBackoff`).
    var credentialWait: (any ClockTimer)?
    /// The address of a client on another machine, which may not reach this machine's services; nil when it may.
    lazy var guardedClient: String? = {
        if let replay = context.replays.tag(forPeer: clientSocket.peerDescription) { return replay.guardedClient }
        let address = clientAddress
        return context.refusesLocalTargets(forClient: address) ? address ?? "unknown" : nil
    }()

    convenience init(descriptor: Int32, peer: SocketAddress?, context: ProxyContext, loop: EventLoop, webUIOnly: Bool = false,
                     reverseTarget: ReverseTarget? = nil, transparent: TransparentArrival? = nil) {
        self.init(client: StreamSocket(descriptor: descriptor, peer: peer, loop: loop), context: context, webUIOnly: webUIOnly,
                  reverseTarget: reverseTarget, transparent: transparent)
    }

    /// A connection from the client at the other end of `client`, on the stream's loop.
    init(client: any ByteStream, context: ProxyContext, webUIOnly: Bool = false, reverseTarget: ReverseTarget? = nil,
         transparent: TransparentArrival? = nil) {
        self.webUIOnly = webUIOnly
        self.reverseTarget = reverseTarget
        self.transparent = transparent
        self.id = context.makeConnectionID()
        self.context = context
        self.loop = client.loop
        self.clientSocket = client
        self.timeout = .after(context.configuration.handshakeTimeout, .proxyRequest, on: context.clock)
    }

    deinit { clientSocket.detach(self) }

    var isClosed: Bool {
        if case .closed = phase { true } else { false }
    }

    /// The HTTP/1 relay, while relaying HTTP/1.
    var httpRelay: HTTPRelay? {
        if case .relaying(.http1(let relay), _) = phase { relay } else { nil }
    }

    /// Waits at most `seconds` for what `reason` names.
    func expect(_ reason: TimeoutReason, within seconds: Double) {
        timeout = .after(seconds, reason, on: context.clock)
    }

    func start() {
        context.registry(for: loop).add(self)
        startProcessLookup()
        clientSocket.delegate = self
        if let reverseTarget {
            openTunnel(host: reverseTarget.host, port: reverseTarget.port, request: .reverse, asksForPins: false, leftover: [])
            // A client on another machine waits until the target is known to be allowed (`targetReached` reads on).
            guard case .peeking = phase else { return }
        }
        if let transparent {
            openTransparentTunnel(transparent)
            guard case .peeking = phase else { return }
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

    var deadline: UInt64 { timeout.at }

    func timedOut() {
        if case .connecting = reachingUpstream?.upstream {
            // The upstream connect has its own timer (the same timeout) and answers the client with a 502.
            timeout.at = context.clock.after(seconds: 1)
            return
        }
        let handshakeTimeout = SecondsText.format(context.configuration.handshakeTimeout)
        let idleTimeout = SecondsText.format(context.configuration.idleTimeout)
        switch phase {
        case .handshaking(let interception):
            if case .upstreamHandshake(let leg, _) = interception.stage {
                // The upstream accepted the connection but never finished TLS: a 502 for the client, like any upstream failure.
                leg.onHandshake = nil
                leg.close()
                upstreamFailedBeforeForging(interception, reason: "TLS handshake timed out (no answer within \(handshakeTimeout))")
                return
            }
            context.events.emit(.timedOut(connectionID: id, host: interception.tunnel.host, what: timeout.reason.waitingFor))
            if case .clientHandshake = interception.stage {
                context.events.emit(.clientTLSFailed(connectionID: id, host: interception.host, port: interception.tunnel.port,
                                                     reason: "the client did not finish the TLS handshake within \(handshakeTimeout)"))
            }
            close(reason: "timed out \(timeout.reason.waitingFor)")
        case .relaying where timeout.reason == .lingering:
            close(reason: "done")
        case .relaying(let relay, _) where relay.holdsBreakpoint:
            touch()  // a pause waits for the web UI, and ends at its own deadline
        case .relaying(.http1(let relay), _):
            if relay.answerSlowHead(now: context.clock.now()) || relay.answerTimeout(after: context.configuration.idleTimeout) { return }
            close(reason: "idle for \(idleTimeout)")
        case .relaying(.web(let web), _):
            if web.idleDeadlinePassed() { return }
            close(reason: "idle for \(idleTimeout)")
        case .relaying:
            close(reason: "idle for \(idleTimeout)")
        case .closed:
            return
        case .lingering:
            close(reason: "timed out \(timeout.reason.waitingFor)")
        case .readingRequest, .socksHandshake:
            context.events.emit(.timedOut(connectionID: id, host: nil, what: timeout.reason.waitingFor))
            close(reason: "timed out \(timeout.reason.waitingFor)")
        case .awaitingTarget(let tunnel), .peeking(let tunnel), .awaitingRawUpstream(let tunnel):
            context.events.emit(.timedOut(connectionID: id, host: tunnel.host, what: timeout.reason.waitingFor))
            close(reason: "timed out \(timeout.reason.waitingFor)")
        }
    }

    /// The tunnel whose upstream is still being reached, if that is what the connection waits for.
    var reachingUpstream: Tunnel? {
        switch phase {
        case .awaitingTarget(let tunnel), .peeking(let tunnel), .awaitingRawUpstream(let tunnel): tunnel
        case .handshaking(let interception): if case .reachingUpstream = interception.stage { interception.tunnel } else { nil }
        case .readingRequest, .socksHandshake, .relaying, .lingering, .closed: nil
        }
    }

    func closeForShutdown() { close(reason: "proxy stopping") }

    /// Bytes moved while relaying: the idle deadline (or a request head's, if sooner) starts again.
    func touch() { touch(headDeadline: httpRelay?.headDeadline) }

    private func touch(headDeadline: UInt64?) {
        lastActivity = context.clock.now()
        let idle = ProxyClock.deadline(context.configuration.idleTimeout, after: lastActivity)
        timeout = ConnectionDeadline(at: min(idle, headDeadline ?? .max), reason: .idle)
        compacted = false
        offeredIdleUpstream = false
    }

    func sweep(now: UInt64) {
        if case .relaying(let relay, _) = phase { relay.sweepBreakpoints(now: now) }
        guard case .relaying(let relay, _) = phase, now >= lastActivity else { return }
        let silent = now - lastActivity
        if !offeredIdleUpstream, silent >= ProxyClock.deadline(context.configuration.upstreamParkDelay, after: 0) {
            offeredIdleUpstream = true
            if case .http1(let relay) = relay { relay.parkIdleUpstream() }
        }
        if !compacted, silent >= 1_000_000_000 {
            compacted = true
            relay.compactIfIdle()
        }
    }

    // MARK: client socket before hand-off

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        switch phase {
        case .readingRequest where startsSOCKS5(bytes): readSOCKS5(SOCKS5Handshake(requiresCredentials: context.configuration.proxyCredentials != nil),
                                                                   Array(bytes))
        case .readingRequest where startsSOCKS4(bytes): refuseSOCKS4()
        case .readingRequest: readRequest(Array(bytes))
        case .socksHandshake(let handshake): readSOCKS5(handshake, Array(bytes))
        case .peeking(let tunnel): peek(tunnel, Array(bytes))
        case .awaitingRawUpstream(let tunnel): tunnel.peeked.append(contentsOf: bytes)
        case .awaitingTarget, .handshaking, .relaying, .lingering, .closed: return
        }
    }

    func socketDidReadEOF(_ socket: any ByteStream) {
        if case .peeking(let tunnel) = phase, !tunnel.peeked.isEmpty {
            context.events.emit(.clientTLSFailed(connectionID: id, host: tunnel.host, port: tunnel.port,
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
            let reason = (try? RequestTarget.parse(head.target, method: "CONNECT")).map { _ in "" } ?? connectTargetError(head.target)
            reject(status: 400, reason: reason)
            return
        }
        if let problem = context.authenticationProblem(head) {
            context.events.emit(.badRequest(connectionID: id, peer: clientSocket.peerDescription, reason: "CONNECT \(head.target): \(problem)"))
            refuseCredentials(head, problem: problem)
            return
        }
        context.noteCredentialsAccepted(client: clientAddress)
        openTunnel(host: host, port: port, request: .httpConnect, asksForPins: head.headers.contains(ProxyProbe.headerName),
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
        let tunnel = Tunnel(host: host, port: port, probe: probe, request: request)
        let answeringRule = probe == .trust ? nil : context.rules.current.answersEveryRequest(host: host, scheme: "https")
        var pooled = probe == .trust || answeringRule != nil ? nil : context.pool(for: loop).take(host: host, port: port)
        if let entry = pooled, guardedClient != nil, LocalTargetGuard.isThisMachine(entry.address) {
            // Opened for a client on this machine; this client may not have it, and dialling tells it why.
            entry.leg.close()
            pooled = nil
        }
        if probe == .trust {
            // Answered by the proxy itself: never dialled upstream.
        } else if let rule = answeringRule {
            tunnel.answeredByRule = rule
        } else if let entry = pooled {
            tunnel.upstream = .pooled(entry)
        } else if guardedClient == nil, context.pool(for: loop).hasSharedHTTP2(host: host, port: port) {
            tunnel.upstream = .deferred
        } else if guardedClient != nil {
            tunnel.peeked = leftover
            phase = .awaitingTarget(tunnel)
            clientSocket.pauseReading()
            expect(.upstream(host: host, port: port), within: context.configuration.handshakeTimeout)
            startConnecting(tunnel)
            return
        } else {
            startConnecting(tunnel)
        }
        answerConnect(tunnel, heldBytes: leftover)
    }

    private static let connectionEstablished = Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8)

    /// Says `200` to the CONNECT (or succeeded to the SOCKS5 request) and starts peeking at the tunnel, first at
    /// `heldBytes` (sent right behind the request).
    func answerConnect(_ tunnel: Tunnel, heldBytes: [UInt8]) {
        switch tunnel.request {
        case .httpConnect: clientSocket.write(Self.connectionEstablished)
        case .socks5: clientSocket.write(SOCKS5Handshake.reply(.succeeded))
        case .reverse, .transparent: break
        }
        phase = .peeking(tunnel)
        expect(.firstTunnelBytes(host: tunnel.host, port: tunnel.port), within: context.configuration.handshakeTimeout)
        if !heldBytes.isEmpty { peek(tunnel, heldBytes) }
    }

    func startConnecting(_ tunnel: Tunnel) {
        tunnel.upstream = .connecting(context.dialer.dial(host: tunnel.host, port: tunnel.port, guardedClient: guardedClient,
                                                          context: context, loop: loop) { [unowned self] result in
            upstreamConnected(tunnel, result)
        })
    }

    /// The upstream of a CONNECT that waited for it: `403` for a target on this machine; otherwise the `200`, then on as
    /// any tunnel whose upstream was reached before the client spoke (a failure is told inside the tunnel, as usual).
    func targetReached(_ tunnel: Tunnel, _ result: Result<UpstreamConnection, UpstreamFailure>) {
        if case .failure(let failure) = result, failure.refusedLocalTarget {
            tunnel.upstream = .none
            refuse(tunnel.request, status: 403, reason: failure.reason)
            return
        }
        let held = tunnel.takePeeked()
        answerConnect(tunnel, heldBytes: [])
        upstreamConnected(tunnel, result)
        if !held.isEmpty, case .peeking = phase { peek(tunnel, held) }
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
    /// A relay keeps its phase while lingering: it still reads, and closes on the client's FIN.
    func linger() {
        if case .relaying = phase {} else {
            dropPhaseResources()
            phase = .lingering
        }
        expect(.lingering, within: 2)
    }

    func startPlainRelay(_ events: [HTTP1Event]) {
        if case .requestHead(let head, _)? = events.first, case .absolute(let url)? = try? RequestTarget.parse(head.target, method: head.method),
           !enterNetworkConditions(host: url.host, port: url.port) {
            return
        }
        let relay = HTTPRelay(connectionID: id, context: context, loop: loop, client: PlainLeg(socket: clientSocket),
                              parser: parser, mode: .plain)
        startRelaying(.http1(relay), for: .plainRequests)
        relay.start(initialEvents: events)
    }

    func startWebUI(_ web: WebUI, _ events: [HTTP1Event]) {
        let connection = WebConnection(web: web, context: context, loop: loop, client: PlainLeg(socket: clientSocket), parser: parser,
                                       onWebPort: webUIOnly)
        startRelaying(.web(connection), for: .webUI)
        connection.start(initialEvents: events)
    }

    // MARK: lifecycle

    /// Enters `.relaying` with `relay`, which reports to this connection from now on.
    func startRelaying(_ relay: Relay, for relayed: Relayed) {
        phase = .relaying(relay, for: relayed)
        relay.setOwner(self)
        touch()
    }

    /// Told by the relay itself, which saves reading it back out of `phase` (a copy of the phase's references).
    func relayActivity(headDeadline: UInt64?) { touch(headDeadline: headDeadline) }

    func relayLingering() { linger() }

    func relayUpgraded(to raw: RawRelay) {
        guard case .relaying(_, let relayed) = phase else { return }
        startRelaying(.raw(raw), for: relayed)
    }

    func relayClosed(reason: String) {
        guard case .relaying(let relay, let relayed) = phase else { return }
        if case .raw(let raw) = relay, case .tunnel(let tunnel) = relayed {
            context.events.emit(.tunnel(connectionID: id, host: tunnel.host, port: tunnel.port, bytesUp: raw.bytesUp,
                                        bytesDown: raw.bytesDown, reason: reason, passedThrough: tunnel.passedThrough,
                                        started: tunnel.started))
        }
        if case .interception(let interception) = relayed { interception.verdict.finish() }
        phase = .closed
        context.registry(for: loop).remove(self)
    }

    func close(reason: String) {
        switch phase {
        case .closed:
            return
        case .relaying(let relay, _):
            // The relay closes its legs and reports back through `relayClosed`, which ends the phase.
            relay.close(reason: reason)
        case .readingRequest, .socksHandshake, .awaitingTarget, .peeking, .awaitingRawUpstream, .handshaking, .lingering:
            dropPhaseResources()
        }
        phase = .closed
        clientSocket.close()
        context.registry(for: loop).remove(self)
    }

    /// Lets go of what the phase before a relay holds: the upstream being reached, handshake legs, an undecided verdict.
    func dropPhaseResources() {
        switch phase {
        case .awaitingTarget(let tunnel), .peeking(let tunnel), .awaitingRawUpstream(let tunnel):
            tunnel.dropUpstream()
        case .handshaking(let interception):
            interception.tunnel.dropUpstream()
            interception.closeHandshakeLegs()
            interception.verdict.finish()
        case .readingRequest, .socksHandshake, .relaying, .lingering, .closed:
            break
        }
    }
}

extension ProxyConnection.Relay {
    func setOwner(_ owner: RelayOwner) {
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
