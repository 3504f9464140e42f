import Foundation

/// One line of the `--events` JSON Lines stream: every event has `time`, `type`, `connection`,
/// `host` and `port`; the other fields depend on the type.
package struct EventLine: Sendable, Encodable, Equatable {
    /// When the event happened.
    package var time: Date
    /// `connection`, `request`, `response`, `verdict`, `probe`, `tunnel`, `handshake`, `error`, `fallback`, `pin-failure-report`,
    /// `client-refused`, `rule`, `websocket-message` or `websocket-close`.
    package var type: String
    /// The proxy's connection id.
    package var connection: Int
    /// The host concerned (`-` when unknown).
    package var host: String
    /// The port concerned (0 when unknown).
    package var port: Int
    package var peer: String?
    package var method: String?
    package var url: String?
    package var status: Int?
    /// `HTTP/1.1` or `HTTP/2.0` (response lines).
    package var httpVersion: String?
    package var requestBytes: Int?
    package var responseBytes: Int?
    package var durationMs: Int?
    package var verdict: String?
    package var reason: String?
    package var alert: String?
    package var detail: String?
    package var tlsVersion: String?
    package var alpn: String?
    package var offeredALPN: [String]?
    package var shownCertificatePin: String?
    package var handshakeMs: Double?
    package var bytesUp: Int?
    package var bytesDown: Int?
    package var error: String?
    /// The client's IP address (verdicts and probes).
    package var client: String?
    /// Who the client is beyond its address: fingerprint, likely stack, process (verdicts and probes).
    package var clientIdentity: ClientIdentity?
    /// The client for a person: `curl (pid 812)` (verdicts and probes).
    package var clientName: String?
    /// `trust` or `pins` (probe lines).
    package var probe: String?
    /// What a `fallback`, `pin-failure-report` or `rule` line means, in words.
    package var message: String?
    /// `plain-http`, `passed-through-tunnel` or `clear-tunnel` (fallback lines).
    package var channel: String?
    /// The report the app posted (pin-failure-report lines).
    package var pinFailureReport: PinFailureReport?
    /// The certificate profile shown (verdicts under `--attack`; absent for `trusted`).
    package var profile: String?
    /// True when the client accepted a certificate of an invalid profile: it does not validate certificates.
    package var acceptedInvalidCertificate: Bool?
    /// True on a verdict of a connection that resumed an earlier TLS session (it was shown no certificate).
    package var resumed: Bool?
    /// True on a `tunnel` line of a TLS tunnel passed through untouched by `--ignore-hosts` or `--intercept-hosts`.
    package var passthrough: Bool?
    /// The rules that acted (`rule` lines) or changed the exchange (`response` lines).
    package var rules: [String]?
    /// The HTTP/2 stream carrying a WebSocket (WebSocket lines; absent on HTTP/1.1).
    package var stream: Int?
    /// `send` (client to server) or `receive` (websocket-message lines).
    package var direction: String?
    /// The message's opcode: 1 text, 2 binary, 8 close, 9 ping, 10 pong.
    package var opcode: Int?
    /// `text`, `binary`, `close`, `ping`, `pong` (or `continuation`, `reserved` for broken frames).
    package var messageType: String?
    /// The payload's size after inflating.
    package var size: Int?
    /// The payload's size on the wire (differs when `compressed`).
    package var wireBytes: Int?
    package var compressed: Bool?
    /// Frames that carried the message, when more than one.
    package var frames: Int?
    /// The payload as kept (`--body-limit`): text for text messages, base64 otherwise (`encoding`).
    package var data: String?
    package var encoding: String?
    /// True when `data` holds only the first bytes of the payload.
    package var truncated: Bool?
    /// How the message breaks RFC 6455 (an endpoint would fail the connection).
    package var malformed: String?
    package var closeCode: Int?
    package var closeReason: String?
    /// `send` when the client sent the first close frame, `receive` when the server did (websocket-close lines).
    package var closedBy: String?
    package var messagesSent: Int?
    package var messagesReceived: Int?

    init(_ type: String, _ connection: Int, _ host: String, _ port: Int, time: Date) {
        self.time = time
        self.type = type
        self.connection = connection
        self.host = host
        self.port = port
    }

    /// The line for `event`, stamped `time`.
    package init(_ event: ProxyEvent, time: Date = Date()) {
        switch event {
        case .connectionOpened(let id, let host, let port, let peer):
            self.init("connection", id, host, port, time: time)
            self.peer = peer
        case .request(let id, let host, let port, let method, let url):
            self.init("request", id, host, port, time: time)
            self.method = method
            self.url = url
        case .exchange(let record):
            self.init("response", record.connectionID, record.host, record.port, time: time)
            method = record.request.method
            url = record.url
            status = record.response?.status
            httpVersion = record.httpVersion
            requestBytes = record.requestBodyBytes
            responseBytes = record.responseBodyBytes
            durationMs = record.durationMilliseconds
            error = record.failure
            rules = record.rules.isEmpty ? nil : record.rules
        case .ruleFired(let firing):
            self.init("rule", firing.connectionID, firing.host, firing.port, time: time)
            rules = firing.rules
            method = firing.method
            url = firing.url
            message = firing.action
        case .verdict(let record):
            self.init(verdict: record, type: "verdict", time: time)
        case .proxyProbe(let record, let probe):
            self.init(verdict: record, type: "probe", time: time)
            self.probe = probe.rawValue
        case .tunnel(let id, let host, let port, let up, let down, let reason, let passedThrough, _):
            self.init("tunnel", id, host, port, time: time)
            bytesUp = up
            bytesDown = down
            self.reason = reason
            passthrough = passedThrough ? true : nil
        case .intercepted(let id, let host, let port, let version, let alpn):
            self.init("handshake", id, host, port, time: time)
            tlsVersion = version
            self.alpn = alpn
        case .clientTLSFailed(let id, let host, let port, let reason):
            self.init("error", id, host, port, time: time)
            error = "client TLS: \(reason)"
        case .upstreamFailed(let id, let host, let port, let reason):
            self.init("error", id, host, port, time: time)
            error = "upstream: \(reason)"
        case .clientRefused(let peer, let reason):
            self.init("client-refused", 0, "-", 0, time: time)
            self.peer = peer
            self.reason = reason
        case .badRequest(let id, let peer, let reason):
            self.init("error", id, "-", 0, time: time)
            self.peer = peer
            error = "bad request: \(reason)"
        case .finding(.fallback(let fallback)):
            self.init("fallback", fallback.connectionID, fallback.host, fallback.refusedPort, time: time)
            client = fallback.client
            channel = fallback.channel.rawValue
            let parts = fallback.request.split(separator: " ", maxSplits: 1).map(String.init)
            method = parts.first
            url = parts.last
            message = fallback.message
        case .finding(.pinFailureReport(let report)):
            self.init("pin-failure-report", report.connectionID, report.notedHostname, report.port ?? 0, time: time)
            client = report.client
            url = report.postedTo
            message = report.summary
            pinFailureReport = report
        case .timedOut(let id, let host, let what):
            self.init("error", id, host ?? "-", 0, time: time)
            error = "timed out \(what)"
        case .webSocketMessage(let record):
            self.init(webSocket: record.endpoint, type: "websocket-message", time: time)
            let message = record.message
            direction = message.direction.rawValue
            opcode = Int(message.opcode)
            messageType = message.kind.rawValue
            size = message.payload.totalSize
            wireBytes = message.wireSize
            compressed = message.compressed ? true : nil
            frames = message.frames > 1 ? message.frames : nil
            let recorded = message.recordedData
            data = recorded.text
            encoding = recorded.isBase64 ? "base64" : nil
            truncated = message.payload.isTruncated ? true : nil
            malformed = message.problem
            closeCode = message.closeCode
            closeReason = message.closeReason
        case .webSocketClose(let record):
            self.init(webSocket: record.endpoint, type: "websocket-close", time: time)
            messagesSent = record.messagesSent
            messagesReceived = record.messagesReceived
            bytesUp = record.bytesUp
            bytesDown = record.bytesDown
            closedBy = record.closedBy?.rawValue
            closeCode = record.closeCode
            closeReason = record.closeReason
            reason = record.reason
        }
    }

    private init(webSocket endpoint: WebSocketEndpoint, type: String, time: Date) {
        self.init(type, endpoint.session.connectionID, endpoint.host, endpoint.port, time: time)
        url = endpoint.url
        stream = endpoint.session.stream == 0 ? nil : Int(endpoint.session.stream)
    }

    private init(verdict record: ConnectionVerdict, type: String, time: Date) {
        self.init(type, record.connectionID, record.host, record.port, time: time)
        verdict = record.verdict.kind.rawValue
        reason = record.verdict.reason.rawValue
        alert = record.verdict.alert
        detail = record.verdict.detail
        tlsVersion = record.tlsVersion
        alpn = record.alpn
        offeredALPN = record.offeredALPN
        shownCertificatePin = record.shownCertificatePin
        handshakeMs = record.handshakeMilliseconds
        client = record.client
        clientIdentity = record.identity
        clientName = record.identity?.label
        profile = record.profile?.description
        acceptedInvalidCertificate = record.acceptedInvalidCertificate ? true : nil
        resumed = record.verdict.resumed
    }

    /// The line as compact JSON (no trailing newline): the keys sorted, as `JSONEncoder` with `.sortedKeys` writes them.
    package func json() -> String {
        var json = JSONWriter()
        write(to: &json)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Writes the line's JSON object into `json`, written by hand (one line per request: `JSONEncoder` was the
    /// recording's largest cost); `EventLineJSONTests` holds it to the `Encodable` form.
    package func write(to json: inout JSONWriter) {
        json.beginObject()
        json.field("acceptedInvalidCertificate", acceptedInvalidCertificate)
        json.field("alert", alert)
        json.field("alpn", alpn)
        json.field("bytesDown", bytesDown)
        json.field("bytesUp", bytesUp)
        json.field("channel", channel)
        json.field("client", client)
        json.field("clientIdentity", encoding: clientIdentity)
        json.field("clientName", clientName)
        json.field("closeCode", closeCode)
        json.field("closeReason", closeReason)
        json.field("closedBy", closedBy)
        json.field("compressed", compressed)
        json.field("connection", connection)
        json.field("data", data)
        json.field("detail", detail)
        json.field("direction", direction)
        json.field("durationMs", durationMs)
        json.field("encoding", encoding)
        json.field("error", error)
        json.field("frames", frames)
        json.field("handshakeMs", handshakeMs)
        json.field("host", host)
        json.field("httpVersion", httpVersion)
        json.field("malformed", malformed)
        json.field("message", message)
        json.field("messageType", messageType)
        json.field("messagesReceived", messagesReceived)
        json.field("messagesSent", messagesSent)
        json.field("method", method)
        json.field("offeredALPN", offeredALPN)
        json.field("opcode", opcode)
        json.field("passthrough", passthrough)
        json.field("peer", peer)
        json.field("pinFailureReport", encoding: pinFailureReport)
        json.field("port", port)
        json.field("probe", probe)
        json.field("profile", profile)
        json.field("reason", reason)
        json.field("requestBytes", requestBytes)
        json.field("responseBytes", responseBytes)
        json.field("resumed", resumed)
        json.field("rules", rules)
        json.field("shownCertificatePin", shownCertificatePin)
        json.field("size", size)
        json.field("status", status)
        json.field("stream", stream)
        json.field("time", ISO8601.format(time))
        json.field("tlsVersion", tlsVersion)
        json.field("truncated", truncated)
        json.field("type", type)
        json.field("url", url)
        json.field("verdict", verdict)
        json.field("wireBytes", wireBytes)
        json.endObject()
    }
}

/// ISO 8601 timestamps with milliseconds, UTC.
package enum ISO8601 {
    /// `2026-11-21T06:41:59.123Z` (milliseconds truncated, as Foundation's ISO 8601 style writes them), formatted by
    /// hand: Foundation's formatter took several microseconds per record.
    package static func format(_ date: Date) -> String {
        // From the reference date, as Foundation counts: a product with 1,000 or a shift to 1970 first can round
        // across a millisecond.
        let reference = date.timeIntervalSinceReferenceDate
        let whole = reference.rounded(.down)
        guard whole.isFinite, abs(whole) < 1e12 else { return "\(date)" }
        let fraction = min(999, Int((reference - whole) * 1000))
        var seconds = time_t(Int(whole) + 978_307_200)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = [UInt8]()
        text.reserveCapacity(24)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        text.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        text.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        text.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        text.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        text.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        text.append(UInt8(ascii: "."))
        digits(fraction, 3)
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }
}
