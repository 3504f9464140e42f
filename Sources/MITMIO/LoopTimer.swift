import Dispatch

/// A one-shot timer on an event loop.
// @unchecked Sendable: DispatchSource is thread-safe; cancellation is idempotent.
public final class LoopTimer: @unchecked Sendable {
    private let source: DispatchSourceTimer

    init(queue: DispatchQueue, after seconds: Double, _ work: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + seconds, leeway: .milliseconds(10))
        source.setEventHandler { [source] in
            source.cancel()
            work()
        }
        source.activate()
    }

    /// Stops the timer if it has not fired yet.
    public func cancel() { source.cancel() }

    deinit { source.cancel() }
}
