import Dispatch
import MITMCore
import Synchronization

/// Carries events from the loops to every subscriber (console, events file, HAR, report, tests) on one
/// recording queue, so a slow subscriber (a pipe nobody reads) never stalls a loop. The queue is bounded:
/// past `capacity` undelivered events new ones are dropped and counted, never waited for.
final class EventFanOut: Sendable {
    private struct State {
        var subscribers: [@Sendable (ProxyEvent) -> Void] = []
        var pending: [ProxyEvent] = []
        /// The last batch's storage, emptied, for `pending` to grow into next time.
        var spare: [ProxyEvent] = []
        var draining = false
        var dropped = 0
    }

    /// Undelivered events held at most.
    let capacity: Int
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "mitm-proxy.recording")
    private let requestSubscribers = Atomic<Int>(0)

    init(capacity: Int = 50_000) {
        self.capacity = capacity
    }

    /// Adds `subscriber`; `takesRequestEvents: false` says it ignores `.request` (only the events file reads them), so
    /// that relays can skip building them when no subscriber does.
    func subscribe(takesRequestEvents: Bool = true, _ subscriber: @escaping @Sendable (ProxyEvent) -> Void) {
        state.withLock { $0.subscribers.append(subscriber) }
        if takesRequestEvents { requestSubscribers.add(1, ordering: .relaxed) }
    }

    /// Whether a subscriber reads `.request` events.
    private var wantsRequestEvents: Bool { requestSubscribers.load(ordering: .relaxed) > 0 }

    /// Queues the `.request` event `make` builds, building it only when a subscriber reads such events (its URL
    /// costs a string per request).
    func emitRequest(_ make: @autoclosure () -> ProxyEvent) {
        if wantsRequestEvents { emit(make()) }
    }

    /// Queues `event` for the subscribers; returns at once.
    func emit(_ event: consuming ProxyEvent) {
        var event = Optional(event)
        let startDraining = state.withLock { state -> Bool in
            guard !state.subscribers.isEmpty else { return false }
            guard state.pending.count < capacity else {
                state.dropped += 1
                return false
            }
            if let event = event.take() { state.pending.append(event) }
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        // Events arriving within the coalescing delay share one wake-up of the recording queue: waking it
        // per event costs a thread hand-off per request.
        if startDraining { queue.asyncAfter(deadline: .now() + Self.coalescingDelay) { self.drain() } }
    }

    /// How long the first undelivered event waits for others before the recording queue wakes.
    static let coalescingDelay = DispatchTimeInterval.milliseconds(5)

    /// Events dropped because the subscribers fell `capacity` events behind.
    var droppedCount: Int { state.withLock { $0.dropped } }

    /// Blocks until every event emitted before the call has been delivered.
    func flush() {
        queue.sync { drain() }
    }

    private func drain() {
        while true {
            let (taken, subscribers) = state.withLock { state in
                let batch = state.pending
                state.pending = state.spare
                state.spare = []
                if batch.isEmpty { state.draining = false }
                return (batch, state.subscribers)
            }
            guard !taken.isEmpty else { return }
            for event in taken {
                for subscriber in subscribers { subscriber(event) }
            }
            var batch = consume taken
            batch.removeAll(keepingCapacity: true)
            state.withLock { $0.spare = batch }
        }
    }
}
