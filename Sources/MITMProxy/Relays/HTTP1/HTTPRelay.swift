import Foundation
import MITMCore
import MITMIO
import MITMRules

/// Relays HTTP/1.x between a client leg and upstream legs, message by message, streaming bodies:
/// keep-alive, pipelining (responses in order), chunked bodies with trailers, close-delimited
/// responses, 1xx, and `Upgrade` handed to a `RawRelay` after `101`. Its state is `machine`'s; the relay performs
/// the machine's actions on its legs and keeps the exchanges' records.
final class HTTPRelay {
    /// Where requests go.
    enum Mode {
        /// Decrypted traffic of one intercepted TLS connection; every request goes to `host:port`, over the upstream
        /// connection the relay holds, or, after it parked that one between requests, over one the owner gives back.
        case intercepted(host: String, port: Int)
        /// A plain-HTTP proxy connection: absolute-form requests, upstream chosen per request.
        case plain
        /// Intercepted, but the upstream could not be reached: every request gets a 502 naming `reason`.
        case failing(host: String, port: Int, reason: String)
    }

    /// An exchange from its request head to the end of its response. A class: the relay reads and updates the one at
    /// the head of the queue for every event, and a copy of the record and the rules' decision would retain each of
    /// their many strings and arrays.
    final class PendingExchange {
        var record: ExchangeRecord
        let local: LocalResponse?
        let upgradeRequested: Bool
        var requestEnded: Date?
        var responseStarted: Date?
        /// The rules' machine that sent the request on, for its response; nil when no rule concerns the exchange.
        let ruled: HTTPRelayRuledExchange?
        /// Whether the client keeps its connection after this exchange (`record.request.keepAlive`, read once: it
        /// scans the headers, and both the response head and its end ask).
        let clientKeepsAlive: Bool

        /// `clientKeepsAlive`: `record.request.keepAlive` when the caller already read it.
        init(
            record: consuming ExchangeRecord, local: LocalResponse?, upgradeRequested: Bool,
            ruled: HTTPRelayRuledExchange? = nil, clientKeepsAlive: Bool? = nil
        ) {
            self.local = local
            self.upgradeRequested = upgradeRequested
            self.clientKeepsAlive = clientKeepsAlive ?? record.request.keepAlive
            self.record = record
            self.ruled = ruled
        }

        func complete(at end: Date) {
            record.complete(at: end, requestEnded: requestEnded, responseStarted: responseStarted)
        }
    }

    let connectionID: Int
    let context: ProxyContext
    let loop: EventLoop
    let client: Leg
    var mode: Mode
    var clientParser: HTTP1Parser
    var responseParser = HTTP1Parser(role: .response)
    var upstream: Leg?
    var upstreamTarget: (host: String, port: Int)?
    var connecting: (any UpstreamAttempt)?
    var exchanges: [PendingExchange] = []
    var queuedClientEvents: [HTTP1Event] = []
    var queuedIndex = 0
    /// The relay's life, the open request and response halves, and whose reads wait for whom.
    var machine = HTTP1RelayMachine()
    static let highWater = 512 * 1024
    /// When the request head being read must be complete (monotonic nanoseconds); nil between requests.
    var headDeadline: UInt64?
    /// The QA rules' state (see `HTTPRelay+Rules.swift`).
    var rules = HTTPRelayRules()

    /// Set when the client is the web UI replaying a request (`ReplayTags`).
    let replayTag: ReplayTags.Tag?
    /// The connection that owns the relay.
    unowned var owner: RelayOwner?
    var records: ExchangeRecordFactory
    /// The `Host` requests go upstream with, behind a `--reverse` port (the client's names the proxy); nil keeps the client's.
    var originAuthority: String?
    /// Where a plain-HTTP connection redirected to the transparent listener was going: every request goes there.
    var transparentOrigin: TransparentOrigin?
    /// DNS/connect/TLS costs of a freshly made upstream connection, charged to the next exchange.
    var newConnectionTimings: UpstreamConnectionTimings? {
        get { records.pendingConnectionTimings }
        set { records.pendingConnectionTimings = newValue }
    }

    init(
        connectionID: Int, context: ProxyContext, loop: EventLoop, client: Leg, parser: HTTP1Parser, mode: Mode,
        upstream: Leg? = nil
    ) {
        self.connectionID = connectionID
        self.context = context
        self.loop = loop
        self.client = client
        self.clientParser = parser
        self.mode = mode
        self.records = ExchangeRecordFactory(
            connectionID: connectionID, captureLimit: context.configuration.bodyCaptureLimit,
            client: client,
            dropsProxyAuthorization: context.configuration.proxyCredentials != nil, replays: context.replays)
        replayTag = context.replays.tag(forPeer: client.peerDescription)
        if case .intercepted(let host, let port) = mode {
            self.upstream = upstream
            upstreamTarget = (host, port)
        }
    }

    /// Starts relaying, first handling events the caller already parsed and bytes already read.
    func start(initialEvents: [HTTP1Event] = [], initialBytes: [UInt8] = []) {
        client.onEvent = { [unowned self] event in self.clientEvent(event) }
        if let upstream { attachUpstream(upstream) }
        enqueue(initialEvents)
        if !initialBytes.isEmpty { initialBytes.withUnsafeBytes { feedClient($0) } }
        if !machine.isClosed && !machine.pauses.contains(.clientForQueue) { client.resumeReading() }
        if let ending = client.takeUntoldInputEnding() { clientEvent(ending) }
    }

    // MARK: client side

    func clientEvent(_ event: LegEvent) {
        let target = upstream
        target?.cork()
        defer { target?.uncork() }
        if machine.isLingering {
            lingerEvent(event)
            return
        }
        owner?.relayActivity(headDeadline: headDeadline)
        switch event {
        case .data(let bytes):
            let direct = hasQueuedClientEvents ? 0 : min(Self.directBodyBytes(of: &clientParser), bytes.count)
            if direct > 0 {
                relayRequestBody(UnsafeRawBufferPointer(rebasing: bytes[..<direct]))
                enqueue(clientParser.skipBody(direct))
            }
            if direct < bytes.count && machine.isRelaying {
                feedClient(UnsafeRawBufferPointer(rebasing: bytes[direct...]))
            }
        case .endOfInput:
            guard !machine.clientHasEnded else { return }
            perform(machine.receive(.clientInputEnded))
            do {
                enqueue(try clientParser.finish())
            } catch {
                close(reason: "client closed mid-request: \(error.reason)")
                return
            }
            if exchanges.isEmpty && !machine.requestIsOpen && !hasQueuedClientEvents {
                offerUpstreamForReuse()
                close(reason: "client closed the connection")
            }
        case .failed(let reason): close(reason: "client: \(reason)")
        case .drained:
            perform(machine.receive(.clientDrained))
            pumpFileAnswer()
        }
    }

    /// `parser.directBodyBytes`, read in place: reading it through the relay's stored property would copy the parser
    /// (retaining its buffers) for every read.
    static func directBodyBytes(of parser: inout HTTP1Parser) -> Int { parser.directBodyBytes }

    /// `parser.isReadingHead`, read in place (see `directBodyBytes(of:)`).
    static func isReadingHead(_ parser: inout HTTP1Parser) -> Bool { parser.isReadingHead }

    /// Whether parsed client events still wait for an upstream.
    var hasQueuedClientEvents: Bool { queuedIndex < queuedClientEvents.count }

    func feedClient(_ bytes: UnsafeRawBufferPointer) {
        do {
            enqueue(try clientParser.feed(bytes))
        } catch {
            rejectClient(error)
            return
        }
        let previous = headDeadline
        if !Self.isReadingHead(&clientParser) {
            headDeadline = nil
        } else if headDeadline == nil {
            headDeadline = context.clock.after(context.configuration.handshakeTimeout)
        }
        // The owner's deadline includes the head's.
        if headDeadline != previous { owner?.relayActivity(headDeadline: headDeadline) }
    }

    /// The head deadline passed with nothing in flight: the client gets a 408 (a slow-header attack must not keep
    /// a connection by trickling bytes that each reset the idle deadline); returns whether it did.
    func answerSlowHead(now: UInt64) -> Bool {
        guard let headDeadline, now >= headDeadline, machine.isRelaying, exchanges.isEmpty else { return false }
        let seconds = SecondsText.format(context.configuration.handshakeTimeout)
        context.events.emit(
            .timedOut(
                connectionID: connectionID, host: upstreamTarget?.host,
                what: "reading a request head (not complete within \(seconds))"))
        let local = LocalResponse.error(status: 408, reason: "the request head did not arrive within \(seconds)")
        client.write(local.head(keepAlive: false).serialized() + local.body)
        closeAfterFlush()
        return true
    }

    func enqueue(_ events: [HTTP1Event]) {
        guard !events.isEmpty else { return }
        queuedClientEvents.append(contentsOf: events)
        processQueuedClientEvents()
    }

    /// Handles client events in order; stops (pausing client reads) when a request must wait for an upstream.
    func processQueuedClientEvents() {
        while !machine.isClosed && queuedIndex < queuedClientEvents.count {
            let event = queuedClientEvents[queuedIndex]
            if case .requestHead(let head, _) = event, !prepareUpstream(for: head) {
                if !readsOnAtBreakpoint() { perform(machine.receive(.requestWaits)) }
                return
            }
            queuedIndex += 1
            handleClientEvent(event)
        }
        queuedClientEvents.removeAll(keepingCapacity: true)
        queuedIndex = 0
        perform(machine.receive(.requestsFlow))
    }

    func handleClientEvent(_ event: HTTP1Event) {
        switch event {
        case .requestHead(let head, let framing):
            guard perform(machine.receive(.requestHead(framing))) else { return }
            beginRequest(head)
        case .responseHead: break
        case .body(let bytes):
            let write = machine.receive(.requestBody)
            guard write == .forward || write == .forwardAsChunk else {
                perform(write)
                return
            }
            guard let index = exchanges.indices.last else { return }
            exchanges[index].record.requestBodyBytes += bytes.count
            exchanges[index].record.requestBody.append(bytes)
            guard exchanges[index].local == nil, let upstream else { return }
            upstream.write(write == .forwardAsChunk ? HTTP1Chunked.encodeChunk(bytes) : bytes)
            pauseClientIfUpstreamIsFull()
        case .end(let trailers):
            let ending = machine.receive(.requestEnd)
            guard ending == .none || ending == .writeLastChunk else {
                perform(ending)
                return
            }
            guard let index = exchanges.indices.last else { return }
            exchanges[index].requestEnded = context.clock.wallNow()
            if exchanges[index].local != nil {
                if index == 0 { sendLocalResponses() }
                return
            }
            if ending == .writeLastChunk { upstream?.write(HTTP1Chunked.lastChunk(trailers: trailers)) }
        }
    }

    /// Body bytes of a request with Content-Length, relayed from the client's read without a copy (nothing queued
    /// before them, so they belong to the last exchange).
    func relayRequestBody(_ bytes: UnsafeRawBufferPointer) {
        guard let index = exchanges.indices.last else { return }
        exchanges[index].record.requestBodyBytes += bytes.count
        exchanges[index].record.requestBody.append(bytes)
        guard exchanges[index].local == nil, let upstream else { return }
        upstream.write(bytes)
        pauseClientIfUpstreamIsFull()
    }

    func pauseClientIfUpstreamIsFull() {
        guard let upstream, upstream.outputRoom(below: Self.highWater) < 0 else { return }
        perform(machine.receive(.upstreamFull))
    }

    /// Whether the request can go now; if not, starts what it waits for (an upstream, earlier responses).
    func prepareUpstream(for head: HTTPRequestHead) -> Bool {
        guard rulesLetRequestStart(head) else { return false }
        if let route = ruledRoute() { return prepareRoute(route) }
        if rules.pending?.answer != nil { return true }
        if case .intercepted = mode { return retakeUpstream() }
        guard case .plain = mode else { return true }
        guard case .forward(let url) = plainRoute(for: head) else {
            return exchanges.isEmpty || exchanges.allSatisfy { $0.local != nil }
        }
        let dial = dialTarget(for: url)
        if let target = upstreamTarget, target.host == dial.host, target.port == dial.port, upstream != nil,
            rules.route == nil
        {
            return true
        }
        guard exchanges.isEmpty, connecting == nil else { return false }
        rules.route = nil
        upstream?.close()
        upstream = nil
        responseParser = HTTP1Parser(role: .response)
        upstreamTarget = dial
        connecting = context.dialer.dial(
            host: dial.host, port: dial.port, guardedClient: guardedClient(), context: context, loop: loop
        ) { [unowned self] result in
            connecting = nil
            switch result {
            case .success(let connection):
                newConnectionTimings = UpstreamConnectionTimings(
                    dns: connection.dnsMilliseconds, connect: connection.connectMilliseconds, ssl: -1,
                    address: connection.address)
                attachUpstream(PlainLeg(socket: connection.socket))
                processQueuedClientEvents()
            case .failure(let failure):
                upstreamTarget = nil
                failQueuedRequest(with: failure)
            }
        }
        return false
    }

    func beginRequest(_ head: HTTPRequestHead) {
        let upgrade = head.headers.contains("upgrade") && head.headers.containsToken("upgrade", in: "connection")
        let decision = takeRuleDecision()
        if !decision.isEmpty, beginRuledRequest(head, decision, upgrade: upgrade) { return }
        switch mode {
        case .intercepted(let host, let port):
            if originAuthority == nil, let refusal = TunnelRequestCheck.check(head, tunnelHost: host, port: port) {
                queueLocal(
                    head, host: host, port: port, scheme: "https",
                    response: .error(status: refusal.status, reason: refusal.reason))
                return
            }
            var forwarded = HopByHopFields.forwarding(head, authority: originAuthority, upgrading: upgrade)
            let keepsAlive = head.keepAlive
            if !upgrade && !keepsAlive { HopByHopFields.keepingUpstreamOpen(&forwarded) }
            forward(
                forwarded, original: head, host: host, port: port, scheme: "https", upgrade: upgrade,
                clientKeepsAlive: keepsAlive)
        case .failing(let host, let port, let reason):
            queueLocal(
                head, host: host, port: port, scheme: "https",
                response: .badGateway(host: host, port: port, reason: reason))
        case .plain:
            switch plainRoute(for: head) {
            case .forward(let url):
                forward(
                    forwardedPlain(head, to: url, upgrading: upgrade), original: head, host: url.host, port: url.port,
                    scheme: "http",
                    upgrade: upgrade)
            case .answer(let host, let port, let scheme, let response):
                queueLocal(head, host: host, port: port, scheme: scheme, response: response)
            }
        }
    }

    /// What the plain-HTTP proxy does with a request: forward it to an origin, or answer it itself.
    enum PlainRoute {
        case forward(AbsoluteURL)
        case answer(host: String, port: Int, scheme: String, LocalResponse)
    }

    /// The route of `head` on a plain proxy connection. Every absolute-form request is a proxy request and needs the
    /// `--proxy-auth` credentials; an origin-form one asks the proxy's own pages directly and needs none.
    func plainRoute(for head: HTTPRequestHead) -> PlainRoute {
        if let transparentOrigin { return transparentRoute(for: head, origin: transparentOrigin) }
        let target: RequestTarget
        do {
            target = try RequestTarget.parse(head.target, method: head.method)
        } catch {
            return .answer(host: "-", port: 0, scheme: "http", .error(status: 400, reason: error.reason))
        }
        switch target {
        case .absolute(let url):
            if let problem = context.authenticationProblem(head) {
                return .answer(
                    host: url.host, port: url.port, scheme: url.scheme, .proxyAuthenticationRequired(reason: problem))
            }
            guard url.scheme == "http" else {
                return .answer(
                    host: url.host, port: url.port, scheme: url.scheme,
                    .error(
                        status: 400,
                        reason: "send https:// requests through a CONNECT tunnel (configure the proxy for HTTPS too)"))
            }
            guard isLocal(url) else { return .forward(url) }
            return .answer(host: url.host, port: url.port, scheme: "http", localPage(url.pathAndQuery, head))
        case .origin(let path):
            return .answer(host: LocalPages.host, port: 80, scheme: "http", localPage(path, head))
        case .authority, .asterisk:
            return .answer(
                host: "-", port: 0, scheme: "http",
                .error(status: 400, reason: "request target \(head.target) is not an absolute http:// URL"))
        }
    }

    private func localPage(_ path: String, _ head: HTTPRequestHead) -> LocalResponse {
        LocalPages.response(
            for: path, request: head, authority: context.authority, advertised: context.configuration.advertised)
    }

    /// Whether an absolute-form request is for the proxy's own pages: `mitm.proxy`, or the proxy's own address
    /// (forwarding that would loop through the proxy).
    func isLocal(_ url: AbsoluteURL) -> Bool {
        LocalPages.handles(host: url.host) || context.ownListener.isOwn(host: url.host, port: url.port)
    }

    func forward(
        _ head: HTTPRequestHead, original: HTTPRequestHead? = nil, host: String, port: Int, scheme: String,
        upgrade: Bool,
        ruled: RuledExchange? = nil, clientKeepsAlive: Bool? = nil
    ) {
        guard let upstream else { return }
        let pending = PendingExchange(
            record: records.record(
                for: original ?? head, host: host, port: port, scheme: scheme, version: head.version,
                at: context.clock.wallNow()),
            local: nil, upgradeRequested: upgrade, ruled: ruled.map(HTTPRelayRuledExchange.init),
            clientKeepsAlive: clientKeepsAlive)
        if let decision = ruled?.decision { pending.record.rules += decision.rules }
        exchanges.append(pending)
        context.events.emitRequest(
            .request(connectionID: connectionID, host: host, port: port, method: head.method, url: pending.record.url))
        if let decision = ruled?.decision, !decision.isEmpty { reportRules(decision, record: pending.record) }
        responseParser.expectResponse(toMethod: head.method)
        upstream.write(original.map(head.bytes(forwarding:)) ?? head.serialized())
    }

    func queueLocal(
        _ head: HTTPRequestHead, host: String, port: Int, scheme: String, response: LocalResponse,
        decision: RuleDecision = RuleDecision()
    ) {
        let pending = PendingExchange(
            record: records.record(
                for: head, host: host, port: port, scheme: scheme, version: head.version,
                at: context.clock.wallNow()),
            local: response, upgradeRequested: false)
        pending.record.rules += decision.rules
        exchanges.append(pending)
        context.events.emitRequest(
            .request(connectionID: connectionID, host: host, port: port, method: head.method, url: pending.record.url))
    }

    /// Answers local exchanges at the head of the queue whose requests are complete.
    func sendLocalResponses() {
        while rules.sender == nil, let first = exchanges.first, let local = first.local,
            !(machine.requestIsOpen && exchanges.count == 1)
        {
            exchanges.removeFirst()
            if let answer = local.rule {
                guard sendRuledAnswer(first, local, answer) else { return }
                continue
            }
            let pending = first
            let response = local.head(keepAlive: first.clientKeepsAlive && !machine.clientHasEnded)
            client.write(response.serialized() + (first.record.request.method == "HEAD" ? [] : local.body))
            pending.responseStarted = context.clock.wallNow()
            pending.complete(at: context.clock.wallNow())
            var record = pending.record
            record.response = response
            record.responseBodyBytes = local.body.count
            record.responseBody.append(local.body)
            if local.head(keepAlive: true).status >= 400 { record.failure = local.reasonText }
            context.events.emit(.exchange(record))
            if !response.keepAlive {
                closeAfterFlush()
                return
            }
        }
        if exchanges.isEmpty { becameIdle() }
    }

    func failQueuedRequest(with failure: UpstreamFailure, scheme: String = "http") {
        if !failure.refusedLocalTarget {
            context.events.emit(
                .upstreamFailed(
                    connectionID: connectionID, host: failure.host, port: failure.port, reason: failure.reason))
        }
        guard queuedIndex < queuedClientEvents.count,
            case .requestHead(let head, let framing) = queuedClientEvents[queuedIndex]
        else { return }
        queuedIndex += 1
        queueLocal(
            head, host: failure.host, port: failure.port, scheme: scheme,
            response: failure.refusedLocalTarget
                ? .error(status: 403, reason: failure.reason)
                : .badGateway(host: failure.host, port: failure.port, reason: failure.reason))
        guard perform(machine.receive(.requestHead(framing))) else { return }
        processQueuedClientEvents()
    }

    func rejectClient(_ error: HTTP1ParseError) {
        context.events.emit(.badRequest(connectionID: connectionID, peer: clientDescription, reason: error.reason))
        let local = LocalResponse.error(status: error.suggestedStatus, reason: error.reason)
        if machine.responseHeadSent || exchanges.contains(where: { $0.local == nil }) {
            close(reason: "malformed request: \(error.reason)")
            return
        }
        client.write(local.head(keepAlive: false).serialized() + local.body)
        closeAfterFlush()
    }

    var clientDescription: String {
        client.peerDescription
    }

    // MARK: lifecycle

    /// Gives back grown buffers of a connection with nothing in flight.
    func compactIfIdle() {
        guard machine.isRelaying, exchanges.isEmpty, !machine.requestIsOpen, queuedClientEvents.isEmpty else { return }
        client.compactIdleMemory()
        upstream?.compactIdleMemory()
    }

    func becameIdle() {
        if context.configuration.upstreamParkDelay <= .zero { parkIdleUpstream() }
        // The upstream's record buffers go at once (measured: 1,000 idle clients hold 2 KiB more each when they go
        // only at parking); the client's wait for parking, as a busy client would have them allocated again.
        upstream?.releaseIdleMemory()
    }

    /// Sends what is queued, then FIN, and keeps reading (discarding) until the client hangs up: closing
    /// a socket with unread input would reset it and could destroy the response in flight.
    func closeAfterFlush() {
        perform(machine.receive(.closeAfterFlush))
    }

    private func linger() {
        connecting?.cancel()
        upstream?.onEvent = nil
        upstream?.close()
        upstream = nil
        client.finishWriting()
        client.resumeReading()
        owner?.relayLingering()
    }

    func lingerEvent(_ event: LegEvent) {
        switch event {
        case .data, .drained: return
        case .endOfInput: close(reason: "done")
        case .failed: close(reason: "done")
        }
    }

    /// Closes both sides now.
    func close(reason: String) {
        guard machine.receive(.close) == .closeNow else { return }
        connecting?.cancel()
        rules.delayTimer?.cancel()
        rules.delayTimer = nil
        endBreakpoint()
        rules.sender?.close()
        for exchange in exchanges where exchange.local == nil {
            var record = exchange.record
            record.finished = context.clock.wallNow()
            record.failure = reason
            context.events.emit(.exchange(record))
        }
        exchanges.removeAll()
        client.onEvent = nil
        upstream?.onEvent = nil
        client.close()
        upstream?.close()
        let owner = owner
        self.owner = nil
        owner?.relayClosed(reason: reason)
    }

    /// Performs an action of the machine that needs nothing from the caller (the caller writes the bytes the body
    /// and head actions are about); returns whether the relay goes on.
    @discardableResult
    func perform(_ action: HTTP1RelayMachine.Action) -> Bool {
        switch action {
        case .pauseClient: client.pauseReading()
        case .resumeClient: client.resumeReading()
        case .pauseUpstream: upstream?.pauseReading()
        case .resumeUpstream: upstream?.resumeReading()
        case .linger: linger()
        case .impossible(let event): close(reason: "HTTP/1 relay: \(event.rawValue)")
        case .none, .forward, .forwardAsChunk, .discard, .writeLastChunk, .relayInterimHead, .relayHead,
            .refuseResponse,
            .endChunkedResponse, .endResponse, .closeNow:
            break
        }
        return !machine.isClosed
    }

    /// The client, when it is on another machine and may not reach this one's servers (see `UpstreamDialer.dial`).
    func guardedClient() -> String? {
        if let replayTag { return replayTag.guardedClient }
        return context.guardedClient(forClient: records.client)
    }
}
