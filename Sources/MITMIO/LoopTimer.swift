/// A one-shot timer on an event loop: cancelling it, or dropping the last reference to it, stops it if it
/// has not fired yet.
// @unchecked Sendable: the entry is only touched on its loop's queue (`LoopCore` sends cancellations there).
public final class LoopTimer: @unchecked Sendable {
    private let entry: TimerEntry
    private let core: LoopCore

    init(entry: TimerEntry, core: LoopCore) {
        self.entry = entry
        self.core = core
    }

    /// Stops the timer if it has not fired yet. Any thread; cancelling twice does nothing.
    public func cancel() { core.cancel(entry) }

    deinit { core.cancel(entry) }
}
