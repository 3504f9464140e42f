import Foundation

/// Everything the web UI shows about one flow, as JSON: heads, bodies, timings, the TLS facts of its connection.
public struct FlowDetail: Encodable, Sendable {
    /// A captured body: text when it is UTF-8 and not content-encoded, base64 otherwise.
    public struct Body: Encodable, Sendable, Equatable {
        /// The body's full size as relayed.
        public var size: Int
        /// Bytes kept (the first ones).
        public var kept: Int
        /// Whether bytes beyond `kept` were relayed but not kept.
        public var truncated: Bool
        /// Why fewer bytes than relayed are shown, in words.
        public var note: String?
        public var mimeType: String
        public var contentEncoding: String?
        public var text: String?
        public var base64: String?

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
                note = "the body is no longer in memory: older flows give their bodies up to keep the list within its memory budget"
            } else if body.isTruncated {
                note = body.limit == 0
                    ? "the body was not recorded (\(body.totalSize) bytes relayed)"
                    : "truncated: the first \(body.bytes.count) of \(body.totalSize) bytes were recorded (--body-limit)"
            }
        }
    }

    /// A request or response head with its body.
    public struct Message: Encodable, Sendable {
        /// Request method and target, or nil for a response.
        public var method: String?
        public var target: String?
        /// Response status and reason, or nil for a request.
        public var status: Int?
        public var reason: String?
        public var httpVersion: String
        /// `[name, value]` pairs in the order they were received.
        public var headers: [[String]]
        public var trailers: [[String]]?
        public var body: Body?
    }

    /// Phase timings in milliseconds (-1: the phase did not happen, e.g. a reused upstream connection).
    public struct Timings: Encodable, Sendable {
        public var started: String
        public var dns: Double
        public var connect: Double
        public var ssl: Double
        public var send: Double
        public var wait: Double
        public var receive: Double
        public var total: Double
    }

    /// What the proxy saw of the TLS connection.
    public struct TLSFacts: Encodable, Sendable {
        /// The server name the client asked for (SNI), or the CONNECT host when it sent none.
        public var sni: String
        public var port: Int
        public var version: String?
        /// The application protocol agreed on.
        public var alpn: String?
        public var offeredALPN: [String]
        /// base64 SHA-256 of the SubjectPublicKeyInfo of the certificate the client was shown.
        public var shownCertificatePin: String
        /// The certificate profile shown (`trusted` unless an attack was set).
        public var profile: String
        public var verdict: String
        public var how: String
        /// The verdict in words.
        public var explanation: String
        public var client: String?
        public var handshakeMilliseconds: Double?
        public var started: String
        public var decided: String

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
            explanation = verdict.profile.map { VerdictText.explanation(verdict.verdict, profile: $0) } ?? VerdictText.explanation(verdict.verdict)
            client = verdict.client
            handshakeMilliseconds = verdict.handshakeMilliseconds.map { ($0 * 10).rounded() / 10 }
            started = ISO8601.format(verdict.startedAt)
            decided = ISO8601.format(verdict.decidedAt)
        }
    }

    public var summary: FlowSummary
    public var request: Message?
    public var response: Message?
    public var timings: Timings?
    public var tls: TLSFacts?
    public var serverAddress: String?
    public var client: String?
    public var failure: String?
    /// Bytes relayed each way through an untouched tunnel.
    public var bytesUp: Int?
    public var bytesDown: Int?

    /// The detail of `flow`.
    public init(_ flow: Flow) {
        summary = FlowSummary(flow)
        switch flow.content {
        case .exchange(let record):
            request = Message(method: record.request.method, target: record.request.target, httpVersion: record.httpVersion,
                              headers: Self.pairs(record.request.headers),
                              body: Body(record.requestBody, headers: record.request.headers, released: flow.bodiesReleased))
            if let head = record.response {
                response = Message(status: head.status, reason: head.reason, httpVersion: record.httpVersion,
                                   headers: Self.pairs(head.headers), trailers: record.responseTrailers.map(Self.pairs),
                                   body: Body(record.responseBody, headers: head.headers, released: flow.bodiesReleased))
            }
            let t = record.timings
            timings = Timings(started: ISO8601.format(record.started), dns: t.dns, connect: t.connect, ssl: t.ssl,
                              send: Self.rounded(t.send), wait: Self.rounded(t.wait), receive: Self.rounded(t.receive),
                              total: Double(record.durationMilliseconds))
            tls = flow.tls.map(TLSFacts.init)
            serverAddress = record.serverAddress
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

    private static func rounded(_ value: Double) -> Double {
        (value * 10).rounded() / 10
    }
}
