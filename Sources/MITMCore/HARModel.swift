/// HAR 1.2 structures (http://www.softwareishard.com/blog/har-12-spec/), encoded as the spec names them.
/// Custom fields start with `_` as the spec allows.
public struct HARNameValue: Encodable, Sendable, Equatable {
    public var name: String
    public var value: String
}

/// A HAR cookie.
public struct HARCookie: Encodable, Sendable, Equatable {
    public var name: String
    public var value: String
    public var path: String?
    public var domain: String?
    public var expires: String?
    public var httpOnly: Bool?
    public var secure: Bool?
}

/// A HAR request.
public struct HARRequest: Encodable, Sendable {
    public var method: String
    public var url: String
    public var httpVersion: String
    public var cookies: [HARCookie]
    public var headers: [HARNameValue]
    public var queryString: [HARNameValue]
    public var postData: HARPostData?
    public var headersSize: Int
    public var bodySize: Int
}

/// A HAR request body.
public struct HARPostData: Encodable, Sendable {
    public var mimeType: String
    public var params: [HARNameValue]
    public var text: String
    public var comment: String?
    public var _encoding: String?
    public var _truncated: Bool?
}

/// A HAR response.
public struct HARResponse: Encodable, Sendable {
    public var status: Int
    public var statusText: String
    public var httpVersion: String
    public var cookies: [HARCookie]
    public var headers: [HARNameValue]
    public var content: HARContent
    public var redirectURL: String
    public var headersSize: Int
    public var bodySize: Int
    public var _error: String?
    public var _trailers: [HARNameValue]?
}

/// A HAR response body.
public struct HARContent: Encodable, Sendable {
    public var size: Int
    public var mimeType: String
    public var text: String?
    public var encoding: String?
    public var comment: String?
    public var _truncated: Bool?
}

/// HAR phase timings in milliseconds (-1 = not applicable).
public struct HARTimings: Encodable, Sendable {
    public var blocked: Double
    public var dns: Double
    public var connect: Double
    public var send: Double
    public var wait: Double
    public var receive: Double
    public var ssl: Double
}

/// An empty HAR cache object (the proxy has no cache).
public struct HARCache: Encodable, Sendable {}

/// One HAR entry: a request and its response.
public struct HAREntry: Encodable, Sendable {
    public var startedDateTime: String
    public var time: Double
    public var request: HARRequest
    public var response: HARResponse
    public var cache: HARCache
    public var timings: HARTimings
    public var serverIPAddress: String?
    public var connection: String?
    /// The rules that changed this exchange (mitm-proxy's QA rules), comma-separated.
    public var _rule: String?
    /// The client that sent the request (`curl (pid 812)`), on intercepted connections.
    public var _client: String?
    public var comment: String?
    /// `websocket` for the handshake of a WebSocket, as Chrome DevTools writes it.
    public var _resourceType: String?
    /// The WebSocket's messages, in Chrome DevTools' shape.
    public var _webSocketMessages: [HARWebSocketMessage]?
}

/// One WebSocket message in Chrome DevTools' `_webSocketMessages` shape (`type`, `time`, `opcode`, `data`), with
/// the proxy's own notes in underscore fields when there is something to note.
public struct HARWebSocketMessage: Encodable, Sendable, Equatable {
    /// `send` (client to server) or `receive`.
    public var type: String
    /// Seconds since 1970, with fractions.
    public var time: Double
    public var opcode: Int
    /// Text for opcode 1, base64 of the payload for the others (as DevTools writes them).
    public var data: String
    /// The payload's full size, when `data` holds only its first bytes.
    public var _size: Int?
    public var _truncated: Bool?
    public var _compressed: Bool?
    public var _closeCode: Int?
    public var _closeReason: String?
    /// How the message breaks RFC 6455.
    public var _malformed: String?
}

/// A refused or failed TLS connection, recorded in the custom `log._tlsErrors` section.
public struct HARTLSError: Encodable, Sendable {
    public var time: String
    public var connection: String
    public var host: String
    public var port: Int
    public var verdict: String
    public var reason: String
    public var alert: String?
    public var detail: String?
    public var tlsVersion: String?
    public var offeredALPN: [String]
    /// The certificate profile shown, when not `trusted`.
    public var profile: String?
    /// Why the entry matters, in words (an accepted invalid certificate).
    public var comment: String?
    /// The client (`curl (pid 812)`), and what it is made of: address, TLS fingerprint, process.
    public var _client: String?
    public var _clientIdentity: ClientIdentity?
}
