/// Why an HTTP/1.x message could not be parsed, with a sentence for logs and the status a proxy should answer with.
public struct HTTP1ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of fault.
    public enum Kind: Sendable, Equatable {
        /// The request line or status line is malformed.
        case badStartLine
        /// A header or trailer field line is malformed (no colon, bad name, control character, obs-fold, …).
        case badHeader
        /// The head (or trailer block) is longer than the parser's `maxHeaderBytes`.
        case headersTooLarge
        /// Content-Length is not a decimal number, or several values disagree.
        case badContentLength
        /// A chunk-size line, or the CRLF after chunk data, is malformed.
        case badChunk
        /// Transfer-Encoding that cannot frame the body: `chunked` is not the final coding, or is applied twice.
        case unsupportedTransferEncoding
        /// A well-formed start line names an HTTP version other than 1.0 and 1.1.
        case badVersion
        /// The connection closed in the middle of a message.
        case truncated
    }

    /// The class of fault.
    public var kind: Kind
    /// A human sentence naming the problem: `header line 3 has no colon`.
    public var reason: String
    /// The status to answer the client with: for request errors 431 (too large), 505 (version) or 400 (a transfer
    /// coding that does not end in chunked included, as RFC 9112 §6.3 requires); for errors in a response read from
    /// upstream 502.
    public var suggestedStatus: Int

    /// An error of `kind` explained by `reason`; `suggestedStatus` defaults to the status for a faulty request.
    public init(_ kind: Kind, _ reason: String, suggestedStatus: Int? = nil) {
        self.kind = kind
        self.reason = reason
        self.suggestedStatus = suggestedStatus ?? Self.requestStatus(for: kind)
    }

    /// The status a server answers a request with when the request has this kind of fault.
    public static func requestStatus(for kind: Kind) -> Int {
        switch kind {
        case .headersTooLarge: 431
        case .badVersion: 505
        case .badStartLine, .badHeader, .badContentLength, .badChunk, .unsupportedTransferEncoding, .truncated: 400
        }
    }

    /// `kind: reason`, for logs.
    public var description: String { "\(kind): \(reason)" }
}
