/// An HTTP/2 error code as carried by RST_STREAM and GOAWAY (RFC 9113 §7).
public struct HTTP2ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code on the wire.
    public let rawValue: UInt32

    /// A code from its wire value (unknown values are kept).
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Graceful end, no error.
    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    /// A protocol violation.
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    /// An unexpected internal error.
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    /// The peer sent more than the flow-control window allowed.
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    /// SETTINGS were not acknowledged in time.
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    /// A frame arrived on a half-closed stream.
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    /// A frame had an invalid size.
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    /// The stream was refused before any processing: safe to retry.
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    /// The stream is no longer needed.
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    /// The HPACK state cannot be maintained.
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    /// A CONNECT tunnel's TCP connection failed.
    public static let connectError = HTTP2ErrorCode(rawValue: 0xa)
    /// The peer is generating excessive load.
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xb)
    /// The transport does not meet minimum security requirements.
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xc)
    /// HTTP/1.1 is required instead.
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xd)

    private static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    /// What a peer did to earn this code, for log lines when nghttp2 gave no details.
    public var peerFault: String {
        switch self {
        case .protocolError: return "frames or header fields that break the protocol"
        case .flowControlError: return "more DATA than the flow-control window allowed"
        case .streamClosed: return "frames on a stream it had already closed"
        case .frameSizeError: return "a frame of invalid size"
        case .refusedStream: return "more concurrent streams than allowed"
        case .compressionError: return "a header block that cannot be decompressed"
        case .enhanceYourCalm: return "more frames than a well-behaved peer sends"
        default: return "an error (\(description))"
        }
    }

    /// The RFC name (`PROTOCOL_ERROR`), or `0x..` for an unknown code.
    public var description: String {
        rawValue < Self.names.count ? Self.names[Int(rawValue)] : "0x" + String(rawValue, radix: 16)
    }
}
