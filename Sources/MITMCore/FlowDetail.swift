import Foundation

/// Everything the web UI shows about one flow, as JSON: heads, bodies, timings, the TLS facts of its connection.
package struct FlowDetail: Encodable, Sendable {
    /// A captured body: text when it is UTF-8 and not content-encoded, base64 otherwise.
    package struct Body: Encodable, Sendable, Equatable {
        /// The body's full size as relayed.
        package var size: Int
        /// Bytes kept (the first ones).
        package var kept: Int
        /// Whether bytes beyond `kept` were relayed but not kept.
        package var truncated: Bool
        /// Why fewer bytes than relayed are shown, in words.
        package var note: String?
        package var mimeType: String
        package var contentEncoding: String?
        package var text: String?
        package var base64: String?

        init(_ body: CapturedBody, headers: HTTPHeaders, released: Bool) {
            size = body.totalSize
            kept = body.bytes.count
            truncated = body.isTruncated
            mimeType = headers.first("content-type") ?? ""
            contentEncoding = headers.first("content-encoding")
            let plain = contentEncoding == nil || contentEncoding?.lowercased() == "identity"
            if plain, let decoded = String(validating: body.bytes, as: UTF8.self) {
                text = decoded
            } else {
                base64 = Data(body.bytes).base64EncodedString()
            }
            if released {
                note =
                    "the body is no longer in memory: older flows give their bodies up to keep the list within its memory budget"
            } else if body.isTruncated {
                note =
                    body.limit == 0
                    ? "the body was not recorded (\(body.totalSize) bytes relayed)"
                    : "truncated: the first \(body.bytes.count) of \(body.totalSize) bytes were recorded (--body-limit)"
            }
        }
    }

    /// A request or response head with its body.
    package struct Message: Encodable, Sendable {
        /// Request method and target, or nil for a response.
        package var method: String?
        package var target: String?
        /// Response status and reason, or nil for a request.
        package var status: Int?
        package var reason: String?
        package var httpVersion: String
        /// `[name, value]` pairs in the order they were received.
        package var headers: [[String]]
        package var trailers: [[String]]?
        package var body: Body?
    }

    /// Phase timings in milliseconds (-1: the phase did not happen, e.g. a reused upstream connection).
    package struct Timings: Encodable, Sendable {
        package var started: String
        package var dns: Double
        package var connect: Double
        package var ssl: Double
        package var send: Double
        package var wait: Double
        package var receive: Double
        package var total: Double
    }

    /// What the proxy saw of the TLS connection.
    package struct TLSFacts: Encodable, Sendable {
        /// The server name the client asked for (SNI), or the CONNECT host when it sent none.
        package var sni: String
        package var port: Int
        package var version: String?
        /// The application protocol agreed on.
        package var alpn: String?
        package var offeredALPN: [String]
        /// base64 SHA-256 of the SubjectPublicKeyInfo of the certificate the client was shown.
        package var shownCertificatePin: String
        /// The certificate profile shown (`trusted` unless an attack was set).
        package var profile: String
        package var verdict: String
        package var how: String
        /// The verdict in words.
        package var explanation: String
        package var client: String?
        package var handshakeMilliseconds: Double?
        package var started: String
        package var decided: String

        init(_ verdict: ConnectionVerdict) {
            sni = verdict.host
            port = verdict.port
            version = verdict.tlsVersion
            alpn = verdict.alpn
            offeredALPN = verdict.offeredALPN
            shownCertificatePin = verdict.shownCertificatePin
            profile = (verdict.profile ?? .trusted).description
            self.verdict = verdict.acceptedInvalidCertificate ? "accepted-invalid" : verdict.verdict.kind.rawValue
            how = verdict.verdict.how
            explanation =
                verdict.profile.map { VerdictText.explanation(verdict.verdict, profile: $0) }
                ?? VerdictText.explanation(verdict.verdict)
            client = verdict.client
            handshakeMilliseconds = verdict.handshakeMilliseconds.map(Milliseconds.shown)
            started = ISO8601.format(verdict.startedAt)
            decided = ISO8601.format(verdict.decidedAt)
        }
    }

    package var summary: FlowSummary
    package var request: Message?
    package var response: Message?
    package var timings: Timings?
    package var tls: TLSFacts?
    /// The origin's address; nil when no origin was contacted (a rule answered).
    package var serverAddress: String?
    /// A rule's own answer (`"teapot": answered 418`): no origin sent the response.
    package var answeredByRule: String?
    /// What each rule that acted did, in order.
    package var rules: [String]?
    /// The WebSocket the exchange opened: its messages and how it ended.
    package var webSocket: FlowWebSocketDetail?
    package var client: String?
    package var failure: String?
    /// Bytes relayed each way through an untouched tunnel.
    package var bytesUp: Int?
    package var bytesDown: Int?

    /// The detail of `flow`.
    package init(_ flow: Flow) {
        summary = FlowSummary(flow)
        switch flow.content {
        case .exchange(let record):
            request = Message(
                method: record.request.method, target: record.request.target, httpVersion: record.httpVersion,
                headers: Self.pairs(record.request.headers),
                body: Body(record.requestBody, headers: record.request.headers, released: flow.bodiesReleased))
            if let head = record.response {
                response = Message(
                    status: head.status, reason: head.reason, httpVersion: record.httpVersion,
                    headers: Self.pairs(head.headers), trailers: record.responseTrailers.map(Self.pairs),
                    body: Body(record.responseBody, headers: head.headers, released: flow.bodiesReleased))
            }
            let t = record.timings
            timings = Timings(
                started: ISO8601.format(record.started), dns: Milliseconds.shown(t.dns),
                connect: Milliseconds.shown(t.connect),
                ssl: Milliseconds.shown(t.ssl), send: Milliseconds.shown(t.send), wait: Milliseconds.shown(t.wait),
                receive: Milliseconds.shown(t.receive), total: Double(record.durationMilliseconds))
            tls = flow.tls.map(TLSFacts.init)
            let summary = self.summary
            rules = summary.ruleActions
            if let answer = flow.localAnswer {
                answeredByRule = "\(answer.rules.map { "\"\($0)\"" }.joined(separator: ", ")): \(answer.action)"
            } else {
                serverAddress = record.serverAddress
            }
            webSocket = flow.webSocket.map(FlowWebSocketDetail.init)
            client = record.client
            failure = record.failure
        case .handshake(let verdict):
            tls = TLSFacts(verdict)
            client = verdict.client
        case .tunnel(let tunnel):
            bytesUp = tunnel.bytesUp
            bytesDown = tunnel.bytesDown
            failure = tunnel.reason
        }
    }

    private static func pairs(_ headers: HTTPHeaders) -> [[String]] {
        headers.map { [$0.name, $0.value] }
    }
}
