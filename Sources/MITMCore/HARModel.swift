/// HAR 1.2 structures (http://www.softwareishard.com/blog/har-12-spec/), encoded as the spec names them.
/// Custom fields start with `_` as the spec allows.
package struct HARNameValue: Encodable, Sendable, Equatable {
    package var name: String
    package var value: String
}

/// A HAR cookie.
package struct HARCookie: Encodable, Sendable, Equatable {
    package var name: String
    package var value: String
    package var path: String?
    package var domain: String?
    package var expires: String?
    package var httpOnly: Bool?
    package var secure: Bool?
}

/// A HAR request.
package struct HARRequest: Encodable, Sendable {
    package var method: String
    package var url: String
    package var httpVersion: String
    package var cookies: [HARCookie]
    package var headers: [HARNameValue]
    package var queryString: [HARNameValue]
    package var postData: HARPostData?
    package var headersSize: Int
    package var bodySize: Int
}

/// A HAR request body.
package struct HARPostData: Encodable, Sendable {
    package var mimeType: String
    package var params: [HARNameValue]
    package var text: String
    package var comment: String?
    package var _encoding: String?
    package var _truncated: Bool?
}

/// A HAR response.
package struct HARResponse: Encodable, Sendable {
    package var status: Int
    package var statusText: String
    package var httpVersion: String
    package var cookies: [HARCookie]
    package var headers: [HARNameValue]
    package var content: HARContent
    package var redirectURL: String
    package var headersSize: Int
    package var bodySize: Int
    package var _error: String?
    package var _trailers: [HARNameValue]?
}

/// A HAR response body.
package struct HARContent: Encodable, Sendable {
    package var size: Int
    package var mimeType: String
    package var text: String?
    package var encoding: String?
    package var comment: String?
    package var _truncated: Bool?
}

/// HAR phase timings in milliseconds (-1 = not applicable).
package struct HARTimings: Encodable, Sendable {
    package var blocked: Double
    package var dns: Double
    package var connect: Double
    package var send: Double
    package var wait: Double
    package var receive: Double
    package var ssl: Double
}

/// An empty HAR cache object (the proxy has no cache).
package struct HARCache: Encodable, Sendable {}

/// One HAR entry: a request and its response.
package struct HAREntry: Encodable, Sendable {
    package var startedDateTime: String
    package var time: Double
    package var request: HARRequest
    package var response: HARResponse
    package var cache: HARCache
    package var timings: HARTimings
    package var serverIPAddress: String?
    package var connection: String?
    /// The rules that changed this exchange (mitm-proxy's QA rules), comma-separated.
    package var _rule: String?
    /// The client that sent the request (`curl (pid 812)`), on intercepted connections.
    package var _client: String?
    /// The web UI's number of the flow this entry replays (resent as it was, or edited).
    package var _replayOf: Int?
    package var comment: String?
    /// `websocket` for the handshake of a WebSocket, as Chrome DevTools writes it.
    package var _resourceType: String?
    /// The WebSocket's messages, in Chrome DevTools' shape.
    package var _webSocketMessages: [HARWebSocketMessage]?
}

/// One WebSocket message in Chrome DevTools' `_webSocketMessages` shape (`type`, `time`, `opcode`, `data`), with
/// the proxy's own notes in underscore fields when there is something to note.
package struct HARWebSocketMessage: Encodable, Sendable, Equatable {
    /// `send` (client to server) or `receive`.
    package var type: String
    /// Seconds since 1970, with fractions.
    package var time: Double
    package var opcode: Int
    /// Text for opcode 1, base64 of the payload for the others (as DevTools writes them).
    package var data: String
    /// The payload's full size, when `data` holds only its first bytes.
    package var _size: Int?
    package var _truncated: Bool?
    package var _compressed: Bool?
    package var _closeCode: Int?
    package var _closeReason: String?
    /// How the message breaks RFC 6455.
    package var _malformed: String?
}

/// A refused or failed TLS connection, recorded in the custom `log._tlsErrors` section.
package struct HARTLSError: Encodable, Sendable {
    package var time: String
    package var connection: String
    package var host: String
    package var port: Int
    package var verdict: String
    package var reason: String
    package var alert: String?
    package var detail: String?
    package var tlsVersion: String?
    package var offeredALPN: [String]
    /// The certificate profile shown, when not `trusted`.
    package var profile: String?
    /// Why the entry matters, in words (an accepted invalid certificate).
    package var comment: String?
    /// The client (`curl (pid 812)`), and what it is made of: address, TLS fingerprint, process.
    package var _client: String?
    package var _clientIdentity: ClientIdentity?
}
