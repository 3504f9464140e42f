/// Whether an event joins the recording queue, waits for room, or is dropped: the queue's backpressure decisions,
/// apart from its threads. Emitters wait while the subscribers make progress; once they made none for a whole wait
/// (stuck on a pipe nobody reads), every event is dropped and counted until they deliver again.
struct RecordingAdmission: Equatable {
    enum Decision: Equatable {
        case queue(startDraining: Bool)
        /// Wait for room, then ask again; `deliveredBefore` is the subscribers' progress when the wait began.
        case wait(deliveredBefore: Int)
        case dropped
    }

    /// Emitters waiting for room, each owed one wake-up when a batch is taken.
    private(set) var waiting = 0
    /// The subscribers' progress when they were found stuck; nil while they are not.
    private(set) var stuckAt: Int?
    var dropped = 0

    mutating func emit(queued: Int, capacity: Int, mayWait: Bool, delivered: Int) -> Decision {
        if let stuckAt, delivered != stuckAt { self.stuckAt = nil }
        if queued < capacity { return .queue(startDraining: false) }
        if !mayWait {
            // Beyond the bound by one event per event the subscribers themselves emit: they are draining.
            return .queue(startDraining: false)
        }
        if stuckAt != nil {
            dropped += 1
            return .dropped
        }
        waiting += 1
        return .wait(deliveredBefore: delivered)
    }

    /// A batch left the queue: every waiting emitter is woken. Returns how many.
    mutating func roomMade() -> Int {
        defer { waiting = 0 }
        return waiting
    }

    /// A wait ended without a wake-up. Returns whether this emitter was still counted as waiting: when it was not, a
    /// wake-up was already given for it and the caller must take it.
    mutating func waitTimedOut(deliveredBefore: Int, deliveredNow: Int) -> Bool {
        if deliveredNow == deliveredBefore { stuckAt = deliveredNow }
        guard waiting > 0 else { return false }
        waiting -= 1
        return true
    }
}
