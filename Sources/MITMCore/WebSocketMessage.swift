import Foundation

/// Which way a WebSocket message went, named from the client's side as Chrome DevTools names it.
public enum WebSocketDirection: String, Sendable, Equatable, Codable {
    /// Client to server.
    case send
    /// Server to client.
    case receive
}

/// One WebSocket message as the proxy saw it pass (RFC 6455): a data message with its fragments joined and,
/// under `permessage-deflate`, inflated; or a control frame (close, ping, pong). The relayed bytes are never
/// changed; this is the record of them.
public struct WebSocketMessage: Sendable, Equatable {
    /// Text and binary messages, control frames, and opcodes RFC 6455 reserves.
    public enum Kind: String, Sendable {
        case text, binary, close, ping, pong, continuation, reserved
    }

    /// Which way it went.
    public var direction: WebSocketDirection
    /// The opcode of its first frame (1 text, 2 binary, 8 close, 9 ping, 10 pong).
    public var opcode: UInt8
    /// Its payload after inflating: the first bytes up to the capture limit, and the full size.
    public var payload: CapturedBody
    /// Payload bytes on the wire, over all its frames (the compressed size when `compressed`).
    public var wireSize = 0
    /// Whether it was sent compressed (`permessage-deflate`).
    public var compressed = false
    /// How many frames carried it (more than one: a fragmented message).
    public var frames = 1
    /// A close frame's status code, when it has one.
    public var closeCode: Int?
    /// A close frame's reason text.
    public var closeReason: String?
    /// How the message breaks RFC 6455 (an endpoint would fail the connection), or nil.
    public var problem: String?

    /// A message of `opcode` going `direction`, keeping at most `captureLimit` payload bytes.
    public init(direction: WebSocketDirection, opcode: UInt8, captureLimit: Int) {
        self.direction = direction
        self.opcode = opcode
        payload = CapturedBody(limit: captureLimit)
    }

    /// What its opcode says it is.
    public var kind: Kind { Self.kind(of: opcode) }

    /// What `opcode` says a frame is.
    public static func kind(of opcode: UInt8) -> Kind {
        switch opcode {
        case 0: .continuation
        case 1: .text
        case 2: .binary
        case 8: .close
        case 9: .ping
        case 10: .pong
        default: .reserved
        }
    }

    /// Whether `opcode` is a control frame's (close, ping, pong, and the reserved 11-15).
    public static func isControl(_ opcode: UInt8) -> Bool { opcode >= 8 }

    /// The kept payload as recorded, the way Chrome DevTools writes it: a text message as text, every other
    /// opcode's payload in base64.
    public var recordedData: (text: String, isBase64: Bool) {
        if opcode == 1 { return (payloadText, false) }
        return (Data(payload.bytes).base64EncodedString(), true)
    }

    /// The kept payload as text: the valid UTF-8 it starts with (a cut inside a character is dropped), the rest
    /// replaced with U+FFFD.
    public var payloadText: String {
        var bytes = payload.bytes
        if payload.isTruncated { bytes = Array(bytes.prefix(UTF8Prefix.completeLength(of: bytes))) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Where a truncated UTF-8 text can be cut without splitting a character.
enum UTF8Prefix {
    /// The length of `bytes` without a trailing incomplete sequence.
    static func completeLength(of bytes: [UInt8]) -> Int {
        var index = bytes.count
        var continuation = 0
        while index > 0 && continuation < 3 && bytes[index - 1] & 0xC0 == 0x80 {
            index -= 1
            continuation += 1
        }
        guard index > 0 else { return bytes.count }
        let lead = bytes[index - 1]
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        return length > continuation + 1 ? index - 1 : bytes.count
    }
}
