/// The start line and header fields of an HTTP/1.x request.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method exactly as sent (methods are case-sensitive): `GET`, `CONNECT`.
    public var method: String { didSet { parsedFrom = nil } }
    /// The request-target exactly as sent; `RequestTarget.parse` interprets it.
    public var target: String { didSet { parsedFrom = nil } }
    /// The protocol version.
    public var version: HTTPVersion { didSet { parsedFrom = nil } }
    /// The header fields in order.
    public var headers: HTTPHeaders { didSet { parsedFrom = nil } }
    /// The bytes the parser read this head from, when it read them in one piece; let go when any part of the head is
    /// set, so they always say what the head says. Not part of equality.
    package var parsedFrom: [UInt8]?

    /// A request head; the version defaults to HTTP/1.1.
    public init(method: String, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// Heads are equal when they say the same: the bytes they were parsed from do not count.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.version == rhs.version
            && lhs.headers == rhs.headers
    }

    /// Whether the connection stays open after this message, judged from the version and the Connection header.
    public var keepAlive: Bool {
        HTTPPersistence.keepAlive(version: version, headers: headers)
    }
}

/// The status line and header fields of an HTTP/1.x response.
public struct HTTPResponseHead: Sendable, Equatable {
    /// The protocol version.
    public var version: HTTPVersion { didSet { parsedFrom = nil } }
    /// The three-digit status code.
    public var status: Int { didSet { parsedFrom = nil } }
    /// The reason phrase; may be empty.
    public var reason: String { didSet { parsedFrom = nil } }
    /// The header fields in order.
    public var headers: HTTPHeaders { didSet { parsedFrom = nil } }
    /// The bytes the parser read this head from, when it read them in one piece; let go when any part of the head is
    /// set, so they always say what the head says. Not part of equality.
    package var parsedFrom: [UInt8]?

    /// A response head; the version defaults to HTTP/1.1.
    public init(version: HTTPVersion = .http1_1, status: Int, reason: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// Heads are equal when they say the same: the bytes they were parsed from do not count.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.version == rhs.version && lhs.status == rhs.status && lhs.reason == rhs.reason
            && lhs.headers == rhs.headers
    }

    /// Whether the connection stays open after this message, judged from the version and the Connection header
    /// (a close-delimited body ends the connection regardless: the parser only ends it in `finish()`).
    public var keepAlive: Bool {
        HTTPPersistence.keepAlive(version: version, headers: headers)
    }
}

/// Connection persistence (RFC 9112 §9.3).
enum HTTPPersistence {
    static func keepAlive(version: HTTPVersion, headers: HTTPHeaders) -> Bool {
        if headers.containsToken("close", in: "connection") { return false }
        if version.major > 1 || (version.major == 1 && version.minor >= 1) { return true }
        return headers.containsToken("keep-alive", in: "connection")
    }
}
