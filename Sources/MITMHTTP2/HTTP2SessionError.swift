import CNGHTTP2

/// An nghttp2 call failed.
public struct HTTP2SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// nghttp2's error code (negative).
    public let code: Int32
    /// What was being done.
    public let operation: String

    /// An error for nghttp2 code `code` during `operation`.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// nghttp2's text for the code.
    public var reason: String { String(cString: nghttp2_strerror(code)) }

    /// Whether the peer sent something that is not HTTP/2 (a bad client preface).
    public var isBadPreface: Bool { code == NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue }

    /// Whether the peer flooded the session: more acknowledgements owed than it reads, or a header block
    /// continued past `HTTP2Settings.maxContinuations`.
    public var isFlood: Bool {
        code == NGHTTP2_ERR_FLOODED.rawValue || code == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue
    }

    public var description: String { "\(operation): \(reason)" }
}
