import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// One client connection to the proxy, from its first byte to its close: reads the proxy request,
/// answers CONNECT, peeks at the tunnel's first bytes, and sets up interception or a raw tunnel.
/// Confined to its loop.
final class ProxyConnection: ManagedConnection, StreamSocketDelegate {
    private enum Phase {
        case readingRequest
        case peeking
        case handshaking
        case relaying
        case closed
    }

    let id: Int
    private let context: ProxyContext
    private let loop: EventLoop
    private let clientSocket: StreamSocket
    private var phase = Phase.readingRequest
    private var parser = HTTP1Parser(role: .request)
    private(set) var deadline: UInt64
    private var connectHost = ""
    private var connectPort = 0
    private var peeked: [UInt8] = []
    private var clientHello: ClientHello?
    private var connector: UpstreamConnector?
    private var upstreamResult: Result<UpstreamConnection, UpstreamFailure>?
    private var upstreamHandshakeStarted = Date()
    private var upstreamLeg: TLSLeg?
    private var clientLeg: TLSLeg?
    private var httpRelay: HTTPRelay?
    private var http2Relay: HTTP2Relay?
    private var rawRelay: RawRelay?
    private var timeoutWhat = "reading the proxy request"
    private var serverFirstWatcher: ServerFirstWatcher?
    private var verdict: VerdictTracker?
    /// Whether buffers were already given back since the last activity.
    private var compacted = false
    private var pooled: PooledUpstream?
    private var upstreamCertificate: X509Certificate?
    private var reusedUpstreamAddress: String?

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
            upstreamFailedBeforeForging("TLS handshake timed out (no answer within \(Int(context.configuration.handshakeTimeout)) s)")
            return
        }
        switch phase {
        case .relaying:
            close(reason: "idle for \(Int(context.configuration.idleTimeout)) s")
        case .closed:
            return
        default:
            context.events.emit(.timedOut(connectionID: id, host: connectHost.isEmpty ? nil : connectHost, what: timeoutWhat))
            if phase == .handshaking && clientLeg != nil {
                context.events.emit(.clientTLSFailed(connectionID: id, host: interceptHost, port: connectPort,
                                                     reason: "the client did not finish the TLS handshake within \(Int(context.configuration.handshakeTimeout)) s"))
            }
            close(reason: "timed out \(timeoutWhat)")
        }
    }

    func closeForShutdown() { close(reason: "proxy stopping") }

    private func touch() {
        deadline = Clock.after(seconds: context.configuration.idleTimeout)
        compacted = false
    }

    func sweep(now: UInt64) {
        guard phase == .relaying, !compacted,
              deadline > now, deadline - now < UInt64((context.configuration.idleTimeout - 1) * 1_000_000_000) else { return }
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

    private func readRequest(_ bytes: [UInt8]) {
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
        connectHost = host
        connectPort = port
        let peer = SocketAddress.peer(of: clientSocket.descriptor)?.description ?? "client"
        context.events.emit(.connectionOpened(connectionID: id, host: host, port: port, peer: peer))
        let leftover = parser.takeBufferedBytes()
        clientSocket.write(Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8))
        phase = .peeking
        timeoutWhat = "waiting for the client's first bytes in the tunnel to \(host):\(port)"
        if let entry = context.pool(for: loop).take(host: host, port: port) {
            pooled = entry
        } else {
            startConnecting()
        }
        if !leftover.isEmpty { peek(leftover) }
    }

    private func startConnecting() {
        connector = UpstreamConnector.connect(host: connectHost, port: connectPort, resolver: context.resolver, loop: loop,
                                             timeout: context.configuration.handshakeTimeout) { [unowned self] result in
            connector = nil
            upstreamConnected(result)
        }
    }

    /// The ALPN protocols offered to the upstream for a client that offered `clientOffer`.
    private func upstreamALPN(for clientOffer: [String]) -> [String] { ALPNPolicy.upstreamOffer(clientOffered: clientOffer) }

    private func connectTargetError(_ target: String) -> String {
        do {
            _ = try RequestTarget.parse(target, method: "CONNECT")
            return "bad CONNECT target"
        } catch {
            return error.reason
        }
    }

    private func reject(status: Int, reason: String) {
        let peer = SocketAddress.peer(of: clientSocket.descriptor)?.description ?? "client"
        context.events.emit(.badRequest(connectionID: id, peer: peer, reason: reason))
        let response = LocalResponse.error(status: status, reason: reason)
        clientSocket.write(response.head(keepAlive: false).serialized() + response.body)
        clientSocket.shutdownWriteAfterFlush()
        phase = .handshaking
        timeoutWhat = "closing after an error response"
        deadline = Clock.after(seconds: 2)
    }

    private func startPlainRelay(_ events: [HTTP1Event]) {
        phase = .relaying
        touch()
        let relay = HTTPRelay(connectionID: id, context: context, loop: loop, client: PlainLeg(socket: clientSocket),
                              parser: parser, mode: .plain)
        adopt(relay)
        relay.start(initialEvents: events)
    }

    // MARK: tunnel

    private func peek(_ bytes: [UInt8]) {
        peeked.append(contentsOf: bytes)
        switch ClientHelloParser.parse(peeked) {
        case .needMoreData:
            return
        case .notTLS:
            clientSocket.pauseReading()
            if let entry = pooled {
                pooled = nil
                entry.leg.close()
                startConnecting()
            }
            startRawTunnelWhenConnected()
        case .clientHello(let hello):
            clientSocket.pauseReading()
            clientHello = hello
            verdict = VerdictTracker(context: context, connectionID: id, host: interceptHost, port: connectPort,
                                     offeredALPN: hello.alpnProtocols)
            timeoutWhat = "connecting to \(connectHost):\(connectPort)"
            phase = .handshaking
            deadline = Clock.after(seconds: context.configuration.handshakeTimeout)
            if let entry = pooled {
                pooled = nil
                interceptReusing(entry, hello: hello)
            } else if let upstreamResult {
                intercept(hello, upstream: upstreamResult)
            }
        case .malformed(let reason):
            let tracker = VerdictTracker(context: context, connectionID: id, host: connectHost, port: connectPort, offeredALPN: [])
            verdict = tracker
            tracker.observe(.handshakeFailed("the client sent a broken TLS ClientHello: \(reason)"))
            context.events.emit(.clientTLSFailed(connectionID: id, host: connectHost, port: connectPort,
                                                 reason: "the client sent a broken TLS ClientHello: \(reason)"))
            close(reason: "malformed ClientHello")
        }
    }

    private func upstreamConnected(_ result: Result<UpstreamConnection, UpstreamFailure>) {
        upstreamResult = result
        if let hello = clientHello {
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

    fileprivate func upstreamSpokeFirst(_ bytes: [UInt8]) {
        guard phase == .peeking, case .success(let connection)? = upstreamResult else { return }
        connection.socket.pauseReading()
        startRawTunnel(upstream: connection.socket, initialDown: bytes)
    }

    fileprivate func upstreamClosedWhilePeeking() {
        close(reason: "upstream \(connectHost):\(connectPort) closed the connection before the client spoke")
    }

    private func startRawTunnelWhenConnected() {
        guard let upstreamResult else { return }
        switch upstreamResult {
        case .failure(let failure):
            context.events.emit(.upstreamFailed(connectionID: id, host: connectHost, port: connectPort, reason: failure.reason))
            close(reason: "upstream unreachable")
        case .success(let connection):
            startRawTunnel(upstream: connection.socket, initialDown: [])
        }
    }

    private func startRawTunnel(upstream socket: StreamSocket, initialDown: [UInt8]) {
        phase = .relaying
        touch()
        let relay = RawRelay(client: PlainLeg(socket: clientSocket), upstream: PlainLeg(socket: socket))
        rawRelay = relay
        relay.onActivity = { [unowned self] in touch() }
        relay.onClose = { [unowned self, unowned relay] reason in
            context.events.emit(.tunnel(connectionID: id, host: connectHost, port: connectPort,
                                        bytesUp: relay.bytesUp, bytesDown: relay.bytesDown, reason: reason))
            finished()
        }
        let initialUp = peeked
        peeked = []
        relay.start(initialUp: initialUp, initialDown: initialDown)
    }

    // MARK: interception

    /// The name the client asked for: its SNI, or the CONNECT host when it sent none.
    private var interceptHost: String {
        if let name = clientHello?.serverName, let valid = HostName.validate(name) { return valid }
        return connectHost
    }

    /// Intercepts over an idle pooled upstream when it was opened the same way this client asks.
    private func interceptReusing(_ entry: PooledUpstream, hello: ClientHello) {
        let host = interceptHost
        let serverName = HostName.isIPAddress(host) ? nil : host
        guard entry.serverName == serverName, entry.offeredALPN == upstreamALPN(for: hello.alpnProtocols),
              hello.serverName.map({ HostName.validate($0) != nil }) ?? true else {
            entry.leg.close()
            startConnecting()
            return
        }
        upstreamLeg = entry.leg
        upstreamCertificate = entry.certificate
        reusedUpstreamAddress = entry.address
        startClientHandshake(names: ForgeNames.names(primary: host, upstream: entry.certificate), upstreamFailure: nil)
    }

    private func intercept(_ hello: ClientHello, upstream: Result<UpstreamConnection, UpstreamFailure>) {
        if let name = hello.serverName, HostName.validate(name) == nil {
            verdict?.observe(.handshakeFailed("invalid server name (SNI)"))
            context.events.emit(.clientTLSFailed(connectionID: id, host: connectHost, port: connectPort,
                                                 reason: "the client sent an invalid server name (SNI) \"\(name.prefix(80))\""))
            close(reason: "invalid SNI")
            return
        }
        let host = interceptHost
        switch upstream {
        case .failure(let failure):
            upstreamFailedBeforeForging(failure.reason)
        case .success(let connection):
            let socket = connection.socket
            timeoutWhat = "the TLS handshake with \(host):\(connectPort)"
            upstreamHandshakeStarted = Date()
            let tls: TLSConnection
            do {
                tls = try TLSConnection(client: context.upstreamTLS, serverName: HostName.isIPAddress(host) ? nil : host,
                                        verifyName: host, port: connectPort, alpn: upstreamALPN(for: hello.alpnProtocols))
            } catch {
                socket.close()
                upstreamFailedBeforeForging("cannot start TLS: \(error)")
                return
            }
            let leg = TLSLeg(socket: socket, tls: tls)
            upstreamLeg = leg
            leg.onHandshake = { [unowned self, unowned leg] outcome in
                switch outcome {
                case .complete:
                    upstreamHandshakeMilliseconds = Date().timeIntervalSince(upstreamHandshakeStarted) * 1000
                    upstreamCertificate = leg.tls.peerCertificates.first
                    // An h2 upstream speaks first (SETTINGS): hold its bytes until a relay takes them.
                    leg.pauseReading()
                    startClientHandshake(names: ForgeNames.names(primary: host, upstream: upstreamCertificate),
                                         upstreamFailure: nil)
                case .failed(let failure):
                    leg.close()
                    upstreamLeg = nil
                    upstreamFailedBeforeForging(Self.describeUpstream(failure))
                case .peerClosed:
                    leg.close()
                    upstreamLeg = nil
                    upstreamFailedBeforeForging("closed the connection during the TLS handshake")
                }
            }
            leg.startHandshake()
        }
    }

    private var upstreamHandshakeMilliseconds: Double = -1

    private static func describeUpstream(_ failure: TLSFailure) -> String {
        if let verifyError = failure.verifyError { return "its certificate is not trusted: \(verifyError)" }
        if let alert = failure.receivedAlert { return "TLS handshake failed: it sent alert \(alert.name)" }
        return "TLS handshake failed: \(failure.reason)"
    }

    private func upstreamFailedBeforeForging(_ reason: String) {
        context.events.emit(.upstreamFailed(connectionID: id, host: interceptHost, port: connectPort, reason: reason))
        startClientHandshake(names: [ForgeNames.name(for: interceptHost)], upstreamFailure: reason)
    }

    private func startClientHandshake(names: [SubjectAlternativeName], upstreamFailure: String?) {
        guard phase != .closed else { return }
        let tls: TLSConnection
        do {
            let leaf = try context.forger.leaf(for: names)
            tls = try TLSConnection(server: context.serverTLS, certificate: leaf, key: context.forger.leafKey,
                                    alpn: clientALPNOffer(upstreamFailed: upstreamFailure != nil))
        } catch {
            context.events.emit(.clientTLSFailed(connectionID: id, host: interceptHost, port: connectPort, reason: "cannot forge a certificate: \(error)"))
            close(reason: "forging failed")
            return
        }
        timeoutWhat = "the client's TLS handshake for \(interceptHost)"
        deadline = Clock.after(seconds: context.configuration.handshakeTimeout)
        let leg = TLSLeg(socket: clientSocket, tls: tls)
        clientLeg = leg
        leg.onHandshake = { [unowned self, unowned leg] outcome in
            if leg.tls.certificateSent { verdict?.observe(.certificateSent) }
            switch outcome {
            case .complete:
                verdict?.handshakeCompleted(leg, loop: loop)
                clientHandshakeCompleted(leg, upstreamFailure: upstreamFailure)
            case .failed(let failure):
                if let alert = failure.receivedAlert {
                    verdict?.observe(.alertReceived(alert))
                } else {
                    verdict?.observe(.handshakeFailed(failure.reason))
                }
                context.events.emit(.clientTLSFailed(connectionID: id, host: interceptHost, port: connectPort,
                                                     reason: Self.describeClient(failure)))
                close(reason: "client TLS handshake failed")
            case .peerClosed(let reset):
                verdict?.observe(.peerClosed(reset: reset))
                let how = reset ? "reset the connection" : "closed the connection"
                let when = leg.tls.certificateSent ? "after receiving the certificate" : "before the certificate was sent"
                context.events.emit(.clientTLSFailed(connectionID: id, host: interceptHost, port: connectPort,
                                                     reason: "the client \(how) during the TLS handshake, \(when), without an alert"))
                close(reason: "client left during the handshake")
            }
        }
        leg.onFirstData = { [unowned self] in verdict?.observe(.applicationData) }
        leg.onInputEnd = { [unowned self] alert, reset in
            if let alert {
                verdict?.observe(.alertReceived(alert))
            } else {
                verdict?.observe(.peerClosed(reset: reset))
            }
        }
        let hello = peeked
        peeked = []
        leg.startHandshake(initialBytes: hello)
    }

    private static func describeClient(_ failure: TLSFailure) -> String {
        if let alert = failure.receivedAlert {
            return alert.rejectsCertificate
                ? "the client rejected the certificate: alert \(alert.name)"
                : "the client aborted the handshake: alert \(alert.name)"
        }
        return "the TLS handshake failed: \(failure.reason)"
    }

    private func clientHandshakeCompleted(_ leg: TLSLeg, upstreamFailure: String?) {
        phase = .relaying
        touch()
        context.events.emit(.intercepted(connectionID: id, host: interceptHost, port: connectPort,
                                         tlsVersion: leg.tls.protocolVersion, alpn: leg.tls.negotiatedALPN))
        if leg.tls.negotiatedALPN == "h2" {
            startHTTP2Relay(client: leg, upstreamFailure: upstreamFailure)
            return
        }
        let mode: HTTPRelay.Mode
        if let upstreamLeg, upstreamFailure == nil {
            mode = .intercepted(host: interceptHost, port: connectPort, upstream: upstreamLeg)
        } else {
            mode = .failing(host: interceptHost, port: connectPort, reason: upstreamFailure ?? "no upstream connection")
        }
        let relay = HTTPRelay(connectionID: id, context: context, loop: loop, client: leg,
                              parser: HTTP1Parser(role: .request), mode: mode)
        if case .success(let connection)? = upstreamResult {
            relay.newConnectionTimings = UpstreamConnectionTimings(
                dns: connection.dnsMilliseconds, connect: connection.connectMilliseconds,
                ssl: upstreamHandshakeMilliseconds, address: connection.address)
        } else if let reusedUpstreamAddress {
            relay.newConnectionTimings = UpstreamConnectionTimings(dns: -1, connect: -1, ssl: -1, address: reusedUpstreamAddress)
        }
        if upstreamFailure == nil, let hello = clientHello { offerUpstreamReuse(from: relay, hello: hello) }
        adopt(relay)
        relay.start()
    }

    /// Lets the relay hand back an idle upstream when the client leaves, for the next client of the origin.
    private func offerUpstreamReuse(from relay: HTTPRelay, hello: ClientHello) {
        let offered = upstreamALPN(for: hello.alpnProtocols)
        let host = interceptHost
        relay.onUpstreamReusable = { [unowned self] leg in
            guard let tlsLeg = leg as? TLSLeg, tlsLeg === upstreamLeg else {
                leg.close()
                return
            }
            let address: String
            if case .success(let connection)? = upstreamResult { address = connection.address } else { address = reusedUpstreamAddress ?? "" }
            upstreamLeg = nil
            upstreamResult = nil
            context.pool(for: loop).park(PooledUpstream(
                leg: tlsLeg, host: connectHost, port: connectPort, serverName: HostName.isIPAddress(host) ? nil : host,
                certificate: upstreamCertificate, address: address, offeredALPN: offered))
        }
    }

    // MARK: HTTP/2

    /// ALPN for the client: exactly what the upstream chose, or the client's own choice when no upstream answered.
    private func clientALPNOffer(upstreamFailed: Bool) -> [String] {
        guard !upstreamFailed, let upstreamLeg else {
            return ALPNPolicy.clientOfferWithoutUpstream(clientOffered: clientHello?.alpnProtocols ?? [])
        }
        return ALPNPolicy.clientOffer(upstreamChose: upstreamLeg.tls.negotiatedALPN)
    }

    private func startHTTP2Relay(client leg: TLSLeg, upstreamFailure: String?) {
        let mode: HTTP2Relay.Mode
        if let upstreamLeg, upstreamFailure == nil {
            mode = .intercepted(host: interceptHost, port: connectPort, upstream: upstreamLeg)
        } else {
            mode = .failing(host: interceptHost, port: connectPort, reason: upstreamFailure ?? "no upstream connection")
        }
        let relay: HTTP2Relay
        do {
            relay = try HTTP2Relay(connectionID: id, context: context, client: leg, mode: mode)
        } catch {
            close(reason: "cannot start HTTP/2: \(error)")
            return
        }
        if case .success(let connection)? = upstreamResult {
            relay.newConnectionTimings = UpstreamConnectionTimings(
                dns: connection.dnsMilliseconds, connect: connection.connectMilliseconds,
                ssl: upstreamHandshakeMilliseconds, address: connection.address)
        }
        http2Relay = relay
        relay.onActivity = { [unowned self] in touch() }
        relay.onLinger = { [unowned self] in deadline = Clock.after(seconds: 2) }
        relay.onClose = { [unowned self] _ in finished() }
        relay.start()
    }

    // MARK: lifecycle

    private func adopt(_ relay: HTTPRelay) {
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

    private func finished() {
        guard phase != .closed else { return }
        verdict?.finish()
        phase = .closed
        context.registry(for: loop).remove(self)
    }

    private func close(reason: String) {
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

/// Watches an upstream socket while the client has not spoken yet.
private final class ServerFirstWatcher: StreamSocketDelegate {
    unowned let owner: ProxyConnection

    init(owner: ProxyConnection) { self.owner = owner }

    func socket(_ socket: StreamSocket, didRead bytes: UnsafeRawBufferPointer) { owner.upstreamSpokeFirst(Array(bytes)) }
    func socketDidReadEOF(_ socket: StreamSocket) { owner.upstreamClosedWhilePeeking() }
    func socket(_ socket: StreamSocket, didFail error: SystemCallError) { owner.upstreamClosedWhilePeeking() }
    func socketDidDrain(_ socket: StreamSocket) {}
}
