/// The life of a raw relay (a tunnel relayed untouched, or a connection after `101 Switching Protocols`): bytes flow
/// both ways until each side's input ends; the relay closes once both ended and everything relayed has left, or at once
/// when either side fails. Events in, actions out; `RawRelay` performs them on its two legs.
struct RawRelayLife: Equatable {
    enum Side: Equatable {
        case client
        case upstream

        var other: Side { self == .client ? .upstream : .client }
    }

    enum State: Equatable {
        /// Both sides still send.
        case flowing
        /// One side's input ended (its end was passed on to the other); the other still sends.
        case oneSideEnded(Side)
        /// Both inputs ended; waiting for the bytes still queued toward a slow reader to leave.
        case flushing
        case closed
    }

    enum Event: Equatable {
        /// `side` ended its input (FIN, close_notify).
        case inputEnded(Side)
        /// The output toward `side` drained.
        case drained(Side)
        /// Reading from or writing to `side` failed.
        case failed(Side, reason: String)
        /// The connection closes the relay.
        case close(reason: String)
    }

    enum Action: Equatable {
        /// Tell the other side that `side`'s input ended (the WebSocket tap, then a FIN after the queued bytes).
        case passEnd(from: Side)
        /// `side` may read again: what it sends has room toward the other side.
        case resumeReading(Side)
        /// Close both legs and report `reason` to the connection.
        case close(reason: String)
        /// Close (both sides closed) if neither leg holds output any more; otherwise a later drain asks again.
        /// Closing earlier would drop bytes still queued toward a slow reader.
        case closeIfFlushed
    }

    private(set) var state = State.flowing

    /// What to do about `event`, in order.
    mutating func receive(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.closed, _):
            return []
        case (_, .close(let reason)):
            state = .closed
            return [.close(reason: reason)]
        case (_, .failed(let side, let reason)):
            state = .closed
            return [.close(reason: side == .client ? "client: \(reason)" : "upstream: \(reason)")]
        case (.flowing, .inputEnded(let side)):
            state = .oneSideEnded(side)
            return [.passEnd(from: side)]
        case (.oneSideEnded(let ended), .inputEnded(let side)) where side != ended:
            state = .flushing
            return [.passEnd(from: side), .closeIfFlushed]
        case (.oneSideEnded, .inputEnded), (.flushing, .inputEnded):
            // A TLS side can end twice (close_notify, then its FIN): the first end was passed on.
            return []
        case (.flowing, .drained(let side)):
            return [.resumeReading(side.other)]
        case (.oneSideEnded(let ended), .drained(let side)):
            return side.other == ended ? [] : [.resumeReading(side.other)]
        case (.flushing, .drained):
            return [.closeIfFlushed]
        }
    }
}
