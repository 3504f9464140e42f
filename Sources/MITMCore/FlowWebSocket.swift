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
    /// What the kept messages cost the body budget: their payloads, and `entryCost` each (so that a flood of empty
    /// pings is bounded too).
    package private(set) var keptBytes = 0
    /// Bytes a kept message counts for besides its payload: about what its record takes in memory.
    package static let entryCost = 256
    /// Set when the WebSocket ended.
    package var close: WebSocketCloseRecord?

    package init() {}

    /// Takes `record`; `keeps` false counts it without keeping it (the flow gave its bodies up).
    package mutating func append(_ record: WebSocketMessageRecord, keeps: Bool) {
        if record.message.direction == .send { sent += 1 } else { received += 1 }
        payloadBytes += record.message.payload.totalSize
        wireBytes += record.message.wireSize
        guard keeps else {
            omitted += 1
            return
        }
        var kept = record
        kept.message.payload = record.message.payload.limited(to: Self.payloadLimit)
        keptBytes += Self.cost(of: kept)
        messages.append(Entry(number: sent + received, record: kept))
        if messages.count > Self.messageLimit {
            keptBytes -= Self.cost(of: messages.removeFirst().record)
            omitted += 1
        }
    }

    /// Lets go of the kept messages, keeping the counts and sizes.
    package mutating func release() {
        omitted += messages.count
        messages = []
        keptBytes = 0
    }

    private static func cost(of record: WebSocketMessageRecord) -> Int {
        record.message.payload.bytes.count + entryCost
    }
}
