import Foundation

/// One row of the web UI's flow list, as JSON: the same columns for every kind of flow.
package struct FlowSummary: Encodable, Sendable, Equatable {
    package var id: Int
    /// `exchange`, `handshake` or `tunnel`.
    package var kind: String
    /// When it started, in milliseconds since 1970.
    package var time: Double
    package var connection: Int
    package var host: String
    /// The request method; `TLS` for a handshake, `TUNNEL` for a tunnel.
    package var method: String
    /// The URL; `host:port` for a handshake or a tunnel.
    package var url: String
    /// The response status, when one came.
    package var status: Int?
    /// Response body bytes (bytes sent down a tunnel; the messages' payload bytes, both ways, of a WebSocket).
    package var size: Int?
    /// Messages so far on the WebSocket the exchange opened.
    package var messages: Int?
    /// Whether that WebSocket is still open.
    package var webSocketOpen: Bool?
    /// The rules that changed or answered the exchange, by name.
    package var rules: [String]?
    /// What they did, in words (`"teapot": answered 418`).
    package var ruleActions: [String]?
    /// Whether a rule answered the request itself: no origin sent the response.
    package var answeredByRule: Bool?
    /// Milliseconds from request to the end of the response (or of the handshake).
    package var duration: Double?
    /// `h2`, `http/1.1`, or the TLS version of a handshake.
    package var `protocol`: String?
    /// The verdict of a handshake: `refused`, `failed`, `inconclusive`, `unused`, `intercepted`.
    package var verdict: String?
    /// How the verdict was reached: `alert unknown_ca`, `closed-after-handshake`.
    package var how: String?
    /// Why an exchange failed, or why a tunnel ended.
    package var failure: String?
    /// The flow this exchange replays, when the web UI resent one.
    package var replayOf: Int?

    /// The row of `flow`.
    package init(_ flow: Flow) {
        id = flow.id
        connection = flow.connectionID
        host = flow.host
        switch flow.content {
        case .exchange(let record):
            kind = "exchange"
            time = record.started.timeIntervalSince1970 * 1000
            method = record.request.method
            url = record.url
            status = record.response?.status
            size = record.responseBodyBytes + (flow.webSocket?.payloadBytes ?? 0)
            if let webSocket = flow.webSocket {
                messages = webSocket.sent + webSocket.received
                webSocketOpen = webSocket.close == nil
            }
            if !record.rules.isEmpty || !flow.ruleFirings.isEmpty {
                var names = record.rules
                for name in flow.ruleFirings.flatMap(\.rules) where !names.contains(name) { names.append(name) }
                rules = names
                ruleActions = flow.ruleFirings.map { firing in
                    "\(firing.rules.map { "\"\($0)\"" }.joined(separator: ", ")): \(firing.action)"
                }
                answeredByRule = flow.localAnswer != nil
            }
            duration = Double(record.durationMilliseconds)
            `protocol` = record.httpVersion == "HTTP/2.0" ? "h2" : record.httpVersion.lowercased()
            failure = record.failure
            replayOf = record.replayOf
        case .handshake(let verdict):
            kind = "handshake"
            time = verdict.startedAt.timeIntervalSince1970 * 1000
            method = "TLS"
            url = "\(HostName.isIPv6(verdict.host) ? "[\(verdict.host)]" : verdict.host):\(verdict.port)"
            duration = (verdict.decidedAt.timeIntervalSince(verdict.startedAt) * 1000).rounded()
            `protocol` = verdict.tlsVersion
            self.verdict = verdict.acceptedInvalidCertificate ? "accepted-invalid" : verdict.verdict.kind.rawValue
            how = verdict.verdict.how
        case .tunnel(let tunnel):
            kind = "tunnel"
            time = tunnel.started.timeIntervalSince1970 * 1000
            duration = max(0, (tunnel.ended.timeIntervalSince(tunnel.started) * 1000).rounded())
            method = tunnel.passedThrough ? "PASSTHROUGH" : "TUNNEL"
            url = "\(HostName.isIPv6(tunnel.host) ? "[\(tunnel.host)]" : tunnel.host):\(tunnel.port)"
            size = tunnel.bytesDown
            failure = tunnel.reason
        }
    }
}
