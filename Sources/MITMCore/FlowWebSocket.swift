import Foundation

/// The WebSocket an exchange opened, as the web UI keeps it: its most recent messages (payloads cut to what a person
/// reads), counts over all of them, and how it ended. Grows while the socket is open.
package struct FlowWebSocket: Sendable, Equatable {
    /// Messages kept per WebSocket: the newest; older ones are counted in `omitted`.
    package static let messageLimit = 1_000
    /// Payload bytes kept per message: the open detail is fetched again as messages pass, so it stays small.
    package static let payloadLimit = 16 * 1024

    /// A kept message with its number over the WebSocket's life (1 is the first).
    package struct Entry: Sendable, Equatable {
        package var number: Int
        package var record: WebSocketMessageRecord
    }

    package private(set) var messages: [Entry] = []
    /// Older messages no longer kept.
    package private(set) var omitted = 0
    package private(set) var sent = 0
    package private(set) var received = 0
    /// Payload bytes of every message (after inflating), both ways.
    package private(set) var payloadBytes = 0
    /// Payload bytes on the wire (compressed ones as sent), both ways.
    package private(set) var wireBytes = 0
    /// Payload bytes held by the kept messages.
    package private(set) var keptBytes = 0
    /// Set when the WebSocket ended.
    package var close: WebSocketCloseRecord?

    package init() {}

    /// Takes `record`; `keepsPayload` false keeps its size but not its bytes (the flow gave its bodies up).
    package mutating func append(_ record: WebSocketMessageRecord, keepsPayload: Bool) {
        var kept = record
        kept.message.payload = record.message.payload.limited(to: keepsPayload ? Self.payloadLimit : 0)
        if record.message.direction == .send { sent += 1 } else { received += 1 }
        payloadBytes += record.message.payload.totalSize
        wireBytes += record.message.wireSize
        keptBytes += kept.message.payload.bytes.count
        messages.append(Entry(number: sent + received, record: kept))
        if messages.count > Self.messageLimit {
            keptBytes -= messages.removeFirst().record.message.payload.bytes.count
            omitted += 1
        }
    }

    /// Lets go of every kept payload, keeping the messages' sizes.
    package mutating func releasePayloads() {
        for index in messages.indices {
            messages[index].record.message.payload = messages[index].record.message.payload.limited(to: 0)
        }
        keptBytes = 0
    }
}
