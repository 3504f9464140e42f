/// What one browser's live feed holds between the recording queue, which fills it, and the browser's connection,
/// which empties it: flow messages in order, only the latest board, and when the browser falls `capacity` bytes
/// behind, a count of the flow messages dropped for it (the page is told and reloads its list). The recording
/// queue never waits for a browser. Events in, actions out.
package struct WebFeedQueue: Sendable {
    /// Where the connection's writer is.
    package enum Writer: Sendable, Equatable {
        /// Nothing is waiting to be written: the next message must wake it.
        case idle
        /// A wake-up is on its way to the connection's loop.
        case scheduled
        /// The connection's output is full: it writes again once drained.
        case waitingForDrain
    }

    /// Bytes of flow messages held at most.
    package let capacity: Int
    private var flows: [[UInt8]] = []
    private var board: [UInt8]?
    /// Bytes of flow messages held.
    package private(set) var heldBytes = 0
    /// Flow messages dropped since the page was last told.
    package private(set) var droppedSinceNotice = 0
    /// Flow messages dropped in all.
    package private(set) var droppedTotal = 0
    package private(set) var writer = Writer.idle

    /// A queue holding at most `capacity` bytes of flow messages.
    package init(capacity: Int = 512 * 1024) {
        self.capacity = capacity
    }

    /// Adds a flow message; returns whether the writer must be woken. Past `capacity`, every held flow message
    /// is dropped and counted: the page reloads the list instead.
    package mutating func pushFlow(_ frame: [UInt8]) -> Bool {
        if heldBytes + frame.count > capacity {
            let dropped = flows.count + 1
            droppedSinceNotice += dropped
            droppedTotal += dropped
            flows = []
            heldBytes = 0
        } else {
            flows.append(frame)
            heldBytes += frame.count
        }
        return wake()
    }

    /// Replaces the board message waiting (only the latest board matters); returns whether the writer must be woken.
    package mutating func pushBoard(_ frame: [UInt8]) -> Bool {
        board = frame
        return wake()
    }

    /// The writer runs: everything to send now, the drop notice first. The writer is idle afterwards.
    package mutating func take() -> [UInt8] {
        writer = .idle
        var bytes: [UInt8] = []
        if droppedSinceNotice > 0 {
            bytes += ServerSentEvent.frame(
                "resync", #"{"dropped":\#(droppedSinceNotice),"droppedTotal":\#(droppedTotal)}"#)
            droppedSinceNotice = 0
        }
        if let board {
            bytes += board
            self.board = nil
        }
        for frame in flows { bytes += frame }
        flows = []
        heldBytes = 0
        return bytes
    }

    /// The connection's output is over its mark: hold messages until `drained()`.
    package mutating func blocked() {
        writer = .waitingForDrain
    }

    /// The connection's output drained; returns whether the writer should take now.
    package mutating func drained() -> Bool {
        guard writer == .waitingForDrain else { return false }
        writer = .scheduled
        return true
    }

    private mutating func wake() -> Bool {
        guard writer == .idle else { return false }
        writer = .scheduled
        return true
    }
}
