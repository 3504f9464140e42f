import Foundation

/// One HTTP request and its response as relayed by the proxy.
public struct ExchangeRecord: Sendable, Equatable {
    /// The proxy's id of the client connection that carried it.
    public var connectionID: Int
    /// `https` for intercepted TLS, `http` for plain proxying.
    public var scheme: String
    /// The origin host (SNI/CONNECT host, or the URL's host).
    public var host: String
    /// The origin port.
    public var port: Int
    /// The request head as the client sent it.
    public var request: HTTPRequestHead
    /// The final response head, or nil when none came (upstream failure, client gone).
    public var response: HTTPResponseHead?
    /// Request body bytes relayed.
    public var requestBodyBytes: Int
    /// Response body bytes relayed.
    public var responseBodyBytes: Int
    /// When the request head arrived.
    public var started: Date
    /// When the response ended (or the exchange was abandoned).
    public var finished: Date
    /// Why the exchange did not complete normally, if it did not.
    public var failure: String?
    /// `HTTP/1.1`, `HTTP/1.0` or `HTTP/2.0`.
    public var httpVersion = "HTTP/1.1"
    /// The request body's first bytes (empty unless body capture is on, e.g. for HAR).
    public var requestBody = CapturedBody()
    /// The response body's first bytes.
    public var responseBody = CapturedBody()
    /// The final response's trailers, if any.
    public var responseTrailers: HTTPHeaders?
    /// Phase timings.
    public var timings = ExchangeTimings()
    /// The upstream server's IP address, when one was contacted.
    public var serverAddress: String?
    /// The client's IP address (no port), when known: fallbacks are judged per client.
    public var client: String?
    /// The client for a person (`curl (pid 812)`), on intercepted connections.
    public var clientName: String?
    /// The rules that changed the exchange (`--map-local`, a rules file's rules), in order.
    public var rules: [String] = []
    /// Set when the exchange opened a WebSocket: its messages and its close follow as their own events.
    public var webSocket: WebSocketSessionID?
    /// The web UI's number of the flow this exchange replays (resent as it was, or edited), when it is a replay.
    public var replayOf: Int?
    /// The exchange's number on its connection (from 1; 0 when unnumbered), which rule firings name (`RuleFiring.exchange`).
    public var exchange = 0

    /// Creates a record.
    public init(
        connectionID: Int, scheme: String, host: String, port: Int, request: HTTPRequestHead,
        response: HTTPResponseHead? = nil, requestBodyBytes: Int = 0, responseBodyBytes: Int = 0,
        started: Date, finished: Date, failure: String? = nil
    ) {
        self.connectionID = connectionID
        self.scheme = scheme
        self.host = host
        self.port = port
        self.request = request
        self.response = response
        self.requestBodyBytes = requestBodyBytes
        self.responseBodyBytes = responseBodyBytes
        self.started = started
        self.finished = finished
        self.failure = failure
    }

    /// `https://host[:port]/path` as the client meant it.
    public var url: String {
        let path: String
        if request.target.utf8.first == UInt8(ascii: "/") {
            path = request.target
        } else if case .absolute(let absolute)? = try? RequestTarget.parse(request.target, method: request.method) {
            path = absolute.pathAndQuery
        } else {
            path = request.target
        }
        // Appended in place: built once per request on the loop, interpolation cost several times as much.
        var url = String()
        url.reserveCapacity(scheme.utf8.count + host.utf8.count + path.utf8.count + 12)
        url += scheme
        url += "://"
        if HostName.isIPv6(host) {
            url += "["
            url += host
            url += "]"
        } else {
            url += host
        }
        if port != (scheme == "https" ? 443 : 80) {
            url += ":"
            url += String(port)
        }
        url += path
        return url
    }

    /// Milliseconds from request head to the end of the response.
    public var durationMilliseconds: Int { max(0, Int((finished.timeIntervalSince(started) * 1000).rounded())) }
}

/// Something the proxy did or saw, for the console and the machine-readable outputs.
public enum ProxyEvent: Sendable, Equatable {
    /// An HTTP exchange finished (or failed).
    case exchange(ExchangeRecord)
    /// A CONNECT tunnel that was relayed without interception ended: not TLS, or (`passedThrough`) a TLS tunnel the
    /// host lists left alone.
    /// `started` is when the proxy accepted the CONNECT (or the connection it came on).
    case tunnel(
        connectionID: Int, host: String, port: Int, bytesUp: Int, bytesDown: Int, reason: String, passedThrough: Bool,
        started: Date)
    /// The client's TLS handshake with the proxy failed or was abandoned.
    case clientTLSFailed(connectionID: Int, host: String, port: Int, reason: String)
    /// Connecting or talking to the upstream failed.
    case upstreamFailed(connectionID: Int, host: String, port: Int, reason: String)
    /// A connection was closed as soon as it was accepted: its address may not use the proxy (`ClientAccessPolicy`).
    case clientRefused(peer: String, reason: String)
    /// A client sent something the proxy could not accept.
    case badRequest(connectionID: Int, peer: String, reason: String)
    /// A TLS connection from a client was intercepted (handshake completed with the forged certificate).
    case intercepted(connectionID: Int, host: String, port: Int, tlsVersion: String, alpn: String?)
    /// A connection ended on a timeout.
    case timedOut(connectionID: Int, host: String?, what: String)
    /// A request head arrived from a client and is being relayed (or answered by the proxy).
    case request(connectionID: Int, host: String, port: Int, method: String, url: String)
    /// A client opened a CONNECT tunnel to `host:port`.
    case connectionOpened(connectionID: Int, host: String, port: Int, peer: String)
    /// The pinning verdict of an intercepted connection was decided (or an inconclusive one upgraded).
    case verdict(ConnectionVerdict)
    /// A connection made to check the proxy itself was decided; it is kept apart from the verdicts.
    case proxyProbe(ConnectionVerdict, ProxyProbe)
    /// A WebSocket message passed through the proxy.
    case webSocketMessage(WebSocketMessageRecord)
    /// A WebSocket ended.
    case webSocketClose(WebSocketCloseRecord)
    /// Something the recorded events add up to: a fallback after a refusal, a pin-failure report posted by the app.
    case finding(RunFinding)
    /// A QA rule acted on a request or a connection.
    case ruleFired(RuleFiring)

    /// An exchange whose request had a body: read in place, so the many events without one are not copied to ask.
    package var carriesRequestBody: Bool {
        guard case .exchange(let record) = self else { return false }
        return !record.requestBody.bytes.isEmpty
    }
}

/// Connections that are about the proxy, not the app under test.
public enum ProxyProbe: String, Sendable, Codable {
    /// `https://mitm.proxy/`, answered by the proxy itself: loading it proves the client trusts the CA.
    case trust
    /// `mitm-proxy pins --connect ... --proxy` (its CONNECT carries `Mitm-Proxy-Probe: pins`).
    case pins

    /// The CONNECT request header that marks the proxy's own probes.
    public static let headerName = "Mitm-Proxy-Probe"
    /// The host name that always means the proxy itself: the trust probe's host, where its own pages are.
    public static let trustHost = "mitm.proxy"
}
