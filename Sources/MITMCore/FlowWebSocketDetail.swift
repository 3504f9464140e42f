import Foundation

/// A WebSocket's messages and end as the web UI's flow detail shows them, as JSON.
package struct FlowWebSocketDetail: Encodable, Sendable {
    /// One message.
    package struct Message: Encodable, Sendable {
        /// Its number over the WebSocket's life (1 is the first).
        package var number: Int
        /// `send` (client to server) or `receive`.
        package var direction: String
        /// When its last frame passed, in milliseconds since 1970.
        package var time: Double
        package var opcode: Int
        /// `text`, `binary`, `close`, `ping`, `pong`, `continuation` or `reserved`.
        package var kind: String
        /// Payload bytes after inflating, and on the wire.
        package var size: Int
        package var wireSize: Int
        package var compressed: Bool
        package var frames: Int
        /// The kept payload: text for a text message, base64 for the others.
        package var text: String?
        package var base64: String?
        /// Whether bytes beyond those kept were relayed.
        package var truncated: Bool
        package var closeCode: Int?
        package var closeReason: String?
        /// How the frame breaks RFC 6455, when it does.
        package var malformed: String?
    }

    package var messages: [Message]
    /// Older messages no longer kept (the detail keeps the newest `FlowWebSocket.messageLimit`).
    package var omitted: Int
    package var sent: Int
    package var received: Int
    package var payloadBytes: Int
    package var wireBytes: Int
    /// Whether the WebSocket is still open.
    package var open: Bool
    /// Who sent the first close frame, its code and reason; why the connection ended; bytes each way, framing included.
    package var closedBy: String?
    package var closeCode: Int?
    package var closeReason: String?
    package var ended: String?
    package var bytesUp: Int?
    package var bytesDown: Int?

    /// The detail of `webSocket`.
    package init(_ webSocket: FlowWebSocket) {
        messages = webSocket.messages.map { entry in
            let message = entry.record.message
            let payload = message.kind == .text ? (text: message.payloadText, isBase64: false) : message.recordedData
            return Message(
                number: entry.number, direction: message.direction.rawValue,
                time: entry.record.time.timeIntervalSince1970 * 1000,
                opcode: Int(message.opcode), kind: message.kind.rawValue, size: message.payload.totalSize,
                wireSize: message.wireSize, compressed: message.compressed, frames: message.frames,
                text: payload.isBase64 ? nil : payload.text, base64: payload.isBase64 ? payload.text : nil,
                truncated: message.payload.isTruncated, closeCode: message.closeCode, closeReason: message.closeReason,
                malformed: message.problem)
        }
        omitted = webSocket.omitted
        sent = webSocket.sent
        received = webSocket.received
        payloadBytes = webSocket.payloadBytes
        wireBytes = webSocket.wireBytes
        open = webSocket.close == nil
        if let close = webSocket.close {
            closedBy = close.closedBy?.rawValue
            closeCode = close.closeCode
            closeReason = close.closeReason
            ended = close.reason
            bytesUp = close.bytesUp
            bytesDown = close.bytesDown
        }
    }
}
