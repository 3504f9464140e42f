/// What the HTTP/1 parser found in the bytes fed to it, in wire order.
public enum HTTP1Event: Sendable, Equatable {
    /// A complete request head, and how its body is delimited.
    case requestHead(HTTPRequestHead, framing: HTTP1BodyFraming)
    /// A complete response head, and how its body is delimited; every informational (1xx) head is its own event,
    /// followed by `.end(trailers: nil)`.
    case responseHead(HTTPResponseHead, framing: HTTP1BodyFraming)
    /// Body bytes in arrival-sized pieces, chunked framing already removed; never empty.
    case body([UInt8])
    /// The message is complete; `trailers` holds the trailer fields of a chunked body when there were any.
    case end(trailers: HTTPHeaders?)
}
