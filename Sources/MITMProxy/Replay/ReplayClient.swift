import Foundation
import MITMCore
import MITMIO
import MITMTLS
import MITMWebUI

/// Sends one request from the web UI through the proxy's own port, as a client would: a plain-HTTP request in
/// absolute form, or an HTTPS request inside a CONNECT tunnel and TLS with the forged certificate. The proxy handles it
/// like any client's (rules, upstream verification, pooling, recording); its connection is tagged (`ReplayTags`) so the
/// record names the flow it replays and the web UI user's access applies. Kept alive by its deadline timer until it ends.
// @unchecked Sendable: confined to its loop; created there, and every callback runs there.
final class ReplayClient: @unchecked Sendable {
    /// Where the replay is.
    enum State {
        case connecting
        /// CONNECT sent; waiting for the proxy's `200`.
        case tunnelling(PlainLeg)
        case handshaking(TLSLeg)
        /// The request went; reading its response.
        case awaitingResponse(any Leg)
        case done
    }

    /// What became of it, for the web UI's answer.
    typealias Outcome = ReplayOutcome

    /// The proxy's TLS toward itself is not verified: the peer is the proxy's own port on this machine, and what the
    /// proxy does upstream (verifying the origin) is what the replay is for.
    private static let tls: Result<ClientTLSContext, TLSError> = Result { () throws(TLSError) in
        try ClientTLSContext(verify: false, extraCAFiles: [])
    }

    private let context: ProxyContext
    private let loop: EventLoop
    private let url: AbsoluteURL
    private let head: HTTPRequestHead
    private let body: [UInt8]
    private let tag: ReplayTags.Tag
    private let done: @Sendable (Outcome) -> Void
    private var state = State.connecting
    private var parser = HTTP1Parser(role: .response)
    private var clientAddress: String?
    private var pending: StreamSocket?
    private var timer: (any ClockTimer)?
    private var status: Int?
    /// The proxy's refusal of the tunnel, and what it said.
    private var refusal: String?
    private var refusalBody: [UInt8] = []

    private init(
        context: ProxyContext, loop: EventLoop, url: AbsoluteURL, head: HTTPRequestHead, body: [UInt8],
        tag: ReplayTags.Tag,
        done: @escaping @Sendable (Outcome) -> Void
    ) {
        self.context = context
        self.loop = loop
        self.url = url
        self.head = head
        self.body = body
        self.tag = tag
        self.done = done
    }

    /// Sends `head` (its target an absolute URL) with `body` through the proxy; `done` hears how it ended (on a loop).
    static func send(
        _ head: HTTPRequestHead, body: [UInt8], tag: ReplayTags.Tag, context: ProxyContext,
        done: @escaping @Sendable (Outcome) -> Void
    ) {
        guard case .absolute(let url)? = try? RequestTarget.parse(head.target, method: head.method),
            ["http", "https"].contains(url.scheme)
        else {
            done(.failed("\(head.target) is not an absolute http:// or https:// URL"))
            return
        }
        guard let endpoint = context.ownListener.proxyEndpoint else {
            done(.failed("the proxy is not listening yet"))
            return
        }
        let loop = context.loops.loops[0]
        loop.execute {
            let client = ReplayClient(
                context: context, loop: loop, url: url, head: head, body: body, tag: tag, done: done)
            client.start(endpoint)
        }
    }

    private func start(_ endpoint: (host: String, port: Int)) {
        let host =
            LocalAddresses.isUnspecified(endpoint.host)
            ? (endpoint.host.contains(":") ? "::1" : "127.0.0.1") : endpoint.host
        guard let address = SocketAddress.numeric(host: host, port: endpoint.port) else {
            finish(.failed("cannot reach the proxy's own port at \(host):\(endpoint.port)"))
            return
        }
        let wait = max(context.configuration.idleTimeout, context.configuration.handshakeTimeout) * 2
        timer = context.clock.schedule(after: wait, on: loop) { [self] in
            finish(.failed("no answer within \(SecondsText.format(wait))"))
        }
        pending = StreamSocket.connect(to: address, on: loop) { [self] result in
            pending = nil
            switch result {
            case .success(let socket): connected(socket)
            case .failure(let error): finish(.failed("cannot connect to the proxy's own port: \(error)"))
            }
        }
    }

    private func connected(_ socket: StreamSocket) {
        guard case .connecting = state else {
            socket.close()
            return
        }
        clientAddress = SocketAddress.local(of: socket.descriptor)?.description
        if let clientAddress { context.replays.register(tag, clientAddress: clientAddress) }
        let leg = PlainLeg(socket: socket)
        if url.scheme == "https" {
            var connect = HTTPRequestHead(method: "CONNECT", target: url.authority)
            connect.headers.add(name: "Host", value: url.authority)
            addProxyAuthorization(to: &connect)
            state = .tunnelling(leg)
            parser.expectResponse(toMethod: "CONNECT")
            leg.onEvent = { [unowned self] event in tunnelEvent(event, leg) }
            leg.write(connect.serialized())
        } else {
            var request = head
            addProxyAuthorization(to: &request)
            sendRequest(request, over: leg)
        }
        leg.resumeReading()
    }

    private func addProxyAuthorization(to head: inout HTTPRequestHead) {
        guard let credentials = context.configuration.proxyCredentials else { return }
        head.headers.replaceOrAdd(name: "Proxy-Authorization", value: credentials.basicAuthorization)
    }

    private func tunnelEvent(_ event: LegEvent, _ leg: PlainLeg) {
        guard case .tunnelling = state,
            let events = parsed(
                event, answering: "answer to CONNECT",
                onFailure: { .failed("the tunnel to \(url.authority) failed: \($0)") })
        else { return }
        for parsed in events {
            switch parsed {
            case .responseHead(let answer, _) where answer.status == 200:
                startTLS(over: leg)
                return
            case .responseHead(let answer, _):
                refusal = "\(answer.status) \(answer.reason)"
            case .body(let bytes):
                refusalBody += bytes.prefix(max(0, 4096 - refusalBody.count))
            case .end, .requestHead:
                break
            }
        }
        let ended = events.contains { if case .end = $0 { true } else { false } }
        if case .endOfInput = event, !ended {
            finish(.failed("the proxy closed the tunnel to \(url.authority) before answering"))
        } else if ended, let refusal {
            let said = String(decoding: refusalBody, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            finish(
                .failed(
                    "the proxy refused the tunnel to \(url.authority): \(refusal)" + (said.isEmpty ? "" : ": \(said)")))
        }
    }

    private func startTLS(over leg: PlainLeg) {
        leg.onEvent = nil
        let connection: TLSConnection
        do {
            let tls = try Self.tls.get()
            connection = try TLSConnection(
                client: tls, serverName: HostName.isIPAddress(url.host) ? nil : url.host,
                verifyName: url.host, port: url.port, alpn: ["h2", "http/1.1"])
        } catch {
            finish(.failed("cannot start TLS toward the proxy: \(error)"))
            return
        }
        let tlsLeg = TLSLeg(socket: leg.socket, tls: connection)
        state = .handshaking(tlsLeg)
        tlsLeg.onHandshake = { [unowned self, unowned tlsLeg] outcome in
            switch outcome {
            case .complete where connection.negotiatedALPN == "h2":
                sendHTTP2Request(over: tlsLeg)
            case .complete:
                parser = HTTP1Parser(role: .response)
                var request = head
                request.target = url.pathAndQuery
                sendRequest(request, over: tlsLeg)
            case .failed(let failure): finish(.failed("TLS with the proxy failed: \(OriginTLS.describe(failure))"))
            case .peerClosed:
                finish(
                    .failed("the proxy closed the connection during TLS (is \(url.host) passed through or refused?)"))
            }
        }
        tlsLeg.startHandshake()
    }

    private func sendRequest(_ request: HTTPRequestHead, over leg: any Leg) {
        var request = request
        request.headers.remove("Transfer-Encoding")
        if !body.isEmpty || request.headers.contains("content-length")
            || ["POST", "PUT", "PATCH"].contains(request.method)
        {
            request.headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        }
        request.headers.replaceOrAdd(name: "Connection", value: "close")
        parser.expectResponse(toMethod: request.method)
        state = .awaitingResponse(leg)
        leg.onEvent = { [unowned self] event in responseEvent(event) }
        leg.write(request.serialized() + body)
        leg.resumeReading()
    }

    /// The proxy chose HTTP/2 (the origin speaks only that): the request goes as one stream.
    private func sendHTTP2Request(over leg: TLSLeg) {
        let exchange: ReplayHTTP2Exchange
        let output: [UInt8]
        do {
            exchange = try ReplayHTTP2Exchange()
            output = try exchange.start(head, url: url, body: body)
        } catch {
            finish(.failed("cannot start HTTP/2 toward the proxy: \(error)"))
            return
        }
        state = .awaitingResponse(leg)
        leg.onEvent = { [unowned self] event in
            guard case .awaitingResponse = state else { return }
            switch event {
            case .data(let bytes):
                switch exchange.receive(bytes) {
                case .going(let output): if !output.isEmpty { leg.write(output) }
                case .ended(let status?, nil): finish(.answered(status: status))
                case .ended(_, let failure):
                    finish(.failed(failure ?? "the proxy ended the HTTP/2 stream without a response"))
                }
            case .endOfInput: finish(.failed("the proxy closed the HTTP/2 connection before the response ended"))
            case .failed(let reason): finish(.failed("the connection to the proxy failed: \(reason)"))
            case .drained: return
            }
        }
        leg.write(output)
        leg.resumeReading()
    }

    private func responseEvent(_ event: LegEvent) {
        guard case .awaitingResponse = state,
            let events = parsed(
                event, answering: "response",
                onFailure: { reason in
                    status.map { .answered(status: $0) } ?? .failed("the connection to the proxy failed: \(reason)")
                })
        else { return }
        for parsed in events {
            switch parsed {
            case .responseHead(let response, _) where response.status >= 200: status = response.status
            case .end where status != nil:
                finish(.answered(status: status!))
                return
            default: continue
            }
        }
        if case .endOfInput = event {
            finish(
                status.map { .answered(status: $0) } ?? .failed("the proxy closed the connection without a response"))
        }
    }

    /// The parser's events for `event`; nil when there is nothing to do (a drain) or the replay ended: the proxy's
    /// `what` was not HTTP, or the connection failed (`onFailure` says how that ends it).
    private func parsed(_ event: LegEvent, answering what: String, onFailure: (String) -> Outcome) -> [HTTP1Event]? {
        do {
            switch event {
            case .data(let bytes): return try parser.feed(bytes)
            case .endOfInput: return try parser.finish()
            case .failed(let reason):
                finish(onFailure(reason))
                return nil
            case .drained: return nil
            }
        } catch {
            finish(.failed("the proxy's \(what) is not HTTP: \(error.reason)"))
            return nil
        }
    }

    private func finish(_ outcome: Outcome) {
        if case .done = state { return }
        let leg: (any Leg)?
        switch state {
        case .tunnelling(let plain): leg = plain
        case .handshaking(let tls): leg = tls
        case .awaitingResponse(let any): leg = any
        case .connecting, .done: leg = nil
        }
        state = .done
        timer?.cancel()
        timer = nil
        pending?.close()
        pending = nil
        leg?.onEvent = nil
        leg?.close()
        if let clientAddress { context.replays.remove(clientAddress: clientAddress) }
        done(outcome)
    }
}
