import Foundation

/// Which WebSocket something belongs to: the client connection, and the HTTP/2 stream that carries it
/// (0 for a WebSocket that took over an HTTP/1.1 connection).
public struct WebSocketSessionID: Sendable, Hashable {
    /// The proxy's id of the client connection.
    public var connectionID: Int
    /// The HTTP/2 stream of an extended CONNECT (RFC 8441), or 0.
    public var stream: Int32

    /// The WebSocket on `stream` of connection `connectionID`.
    public init(connectionID: Int, stream: Int32 = 0) {
        self.connectionID = connectionID
        self.stream = stream
    }
}

/// Where a WebSocket goes: what every message and the close record carry.
public struct WebSocketEndpoint: Sendable, Equatable {
    /// Which WebSocket.
    public var session: WebSocketSessionID
    /// The origin host and port.
    public var host: String
    public var port: Int
    /// The URL of the opening handshake (`https://host/path`).
    public var url: String

    /// An endpoint.
    public init(session: WebSocketSessionID, host: String, port: Int, url: String) {
        self.session = session
        self.host = host
        self.port = port
        self.url = url
    }
}

/// A WebSocket message the proxy relayed.
public struct WebSocketMessageRecord: Sendable, Equatable {
    /// The WebSocket.
    public var endpoint: WebSocketEndpoint
    /// When its last frame passed the proxy.
    public var time: Date
    /// The message.
    public var message: WebSocketMessage

    /// A record of `message` on `endpoint`.
    public init(endpoint: WebSocketEndpoint, time: Date, message: WebSocketMessage) {
        self.endpoint = endpoint
        self.time = time
        self.message = message
    }
}

/// A WebSocket that ended: what went each way and how it closed.
public struct WebSocketCloseRecord: Sendable, Equatable {
    /// The WebSocket.
    public var endpoint: WebSocketEndpoint
    /// When it ended.
    public var time: Date
    /// Messages (control frames included) from the client and from the server.
    public var messagesSent = 0
    public var messagesReceived = 0
    /// Bytes relayed each way after the handshake, framing included.
    public var bytesUp = 0
    public var bytesDown = 0
    /// Who sent the first close frame, if anyone did.
    public var closedBy: WebSocketDirection?
    /// That close frame's code and reason.
    public var closeCode: Int?
    public var closeReason: String?
    /// Why the connection (or the stream) ended, as the relay saw it.
    public var reason: String

    /// A record of the WebSocket on `endpoint` ending at `time` for `reason`.
    public init(endpoint: WebSocketEndpoint, time: Date, reason: String) {
        self.endpoint = endpoint
        self.time = time
        self.reason = reason
    }
}
