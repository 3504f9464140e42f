/// What a received header block is, judged from its position in the stream and its pseudo-headers.
public enum HTTP2HeaderBlockKind: Sendable, Equatable {
    /// A request's header section (server role).
    case request
    /// An interim `1xx` response (client role).
    case informational
    /// The final response's header section (client role).
    case response
    /// Trailer fields after a body.
    case trailers
}

/// A complete header block received on a stream.
public struct HTTP2HeaderBlock: Sendable, Equatable {
    /// What the block is.
    public var kind: HTTP2HeaderBlockKind
    /// The fields in the order received, pseudo-headers first; when `exceedsLimit`, only those that
    /// fit within the limit (enough to name the request in a log line, not to forward it).
    public var fields: [HTTP2HeaderField]
    /// Whether the block ended the peer's side of the stream (END_STREAM).
    public var endStream: Bool
    /// Whether the block was larger than the session's header list limit; the fields past it were dropped.
    public var exceedsLimit: Bool

    /// A header block.
    public init(kind: HTTP2HeaderBlockKind, fields: [HTTP2HeaderField], endStream: Bool, exceedsLimit: Bool = false) {
        self.kind = kind
        self.fields = fields
        self.endStream = endStream
        self.exceedsLimit = exceedsLimit
    }
}

/// Something that happened inside an `HTTP2Session` during a call, reported after the call returned.
public enum HTTP2Event: Sendable, Equatable {
    /// A header block arrived.
    case headers(streamID: Int32, HTTP2HeaderBlock)
    /// Body bytes arrived; the stream's receive window reopens only when they are `consume`d.
    case data(streamID: Int32, [UInt8])
    /// A DATA frame with END_STREAM arrived: the peer's body is complete.
    case endStream(streamID: Int32)
    /// The peer reset the stream.
    case resetReceived(streamID: Int32, HTTP2ErrorCode)
    /// This side reset the stream (on request, or nghttp2 on a stream error such as a bad header).
    case resetSent(streamID: Int32, HTTP2ErrorCode)
    /// The stream closed; `code` is `noError` for a normal end.
    case streamClosed(streamID: Int32, HTTP2ErrorCode)
    /// `count` body bytes queued with `send` went out in DATA frames (the other side may read that much more).
    case dataSent(streamID: Int32, count: Int)
    /// The peer's SETTINGS arrived (not an ACK).
    case settingsReceived
    /// The peer sent GOAWAY: streams above `lastStreamID` were not processed.
    case goAwayReceived(lastStreamID: Int32, HTTP2ErrorCode, debug: String)
    /// This side sent GOAWAY (on request, or nghttp2 on a connection error, explaining it in `debug`).
    case goAwaySent(lastStreamID: Int32, HTTP2ErrorCode, debug: String)
    /// nghttp2 explained an error in what the peer sent (for the log).
    case diagnostic(String)
}

extension HTTP2Event {
    /// Whether a stream moved (a head, body bytes either way, an end, a reset), as opposed to connection
    /// upkeep (SETTINGS, GOAWAY; PINGs raise no event at all). A connection whose streams do not move is idle
    /// however many PINGs keep its socket busy.
    public var movesAStream: Bool {
        switch self {
        case .headers, .data, .endStream, .resetReceived, .resetSent, .streamClosed, .dataSent: true
        case .settingsReceived, .goAwayReceived, .goAwaySent, .diagnostic: false
        }
    }
}
