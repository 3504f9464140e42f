import Dispatch
import MITMCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Carries events from the loops to every subscriber (console, events file, HAR, report, tests) on one
/// recording queue. The queue is bounded: an emitter that finds `capacity` events undelivered waits while the
/// subscribers make progress (backpressure: the loops slow to what the records can keep up with, and nothing is lost),
/// and drops, counting, only when they made none for `stallTimeout` (a pipe nobody reads must not stall the proxy).
package final class EventFanOut: Sendable {
    /// One subscriber: `finish` ends an event stream's iteration when the proxy stops.
    private struct Subscriber {
        let id: Int
        let takesRequestEvents: Bool
        let deliver: @Sendable (ProxyEvent) -> Void
        let finish: (@Sendable () -> Void)?
        /// Told after each batch of events was delivered: writers hand what they gathered to the kernel then.
        let endOfBatch: (@Sendable () -> Void)?
    }

    private struct State {
        var subscribers: [Subscriber] = []
        var nextID = 0
        var finished = false
        var pending: [ProxyEvent] = []
        /// The last batch's storage, emptied, for `pending` to grow into next time.
        var spare: [ProxyEvent] = []
        var draining = false
        var admission = RecordingAdmission()
    }

    /// Undelivered events held at most. The recording queue takes them all at once, so an emitter that waits for room
    /// waits for up to this many deliveries (about 80 ms at 20 µs each): a small bound keeps the loops' pauses short.
    package let capacity: Int
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "mitm-proxy.recording")
    private let requestSubscribers = Atomic<Int>(0)
    /// Events delivered so far: how a waiting emitter tells a slow subscriber from a stuck one.
    private let delivered = Atomic<Int>(0)
    /// Signalled once per waiting emitter when a batch is taken off the queue.
    private let roomMade = DispatchSemaphore(value: 0)
    private static let onRecordingQueue = DispatchSpecificKey<Bool>()
    /// How long emitters wait for subscribers that deliver nothing before they drop.
    private let stallTimeout: DispatchTimeInterval

    package init(capacity: Int = 4_096, stallTimeout: Duration = .seconds(2)) {
        self.capacity = capacity
        let (seconds, attoseconds) = stallTimeout.components
        self.stallTimeout = .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        queue.setSpecific(key: Self.onRecordingQueue, value: true)
    }

    /// Adds `subscriber`; `takesRequestEvents: false` says it ignores `.request` (only the events file reads them), so
    /// that relays can skip building them when no subscriber does. `endOfBatch` is called after each batch of events
    /// (those that arrived within one coalescing delay), and after the last before `flush()` returns.
    package func subscribe(
        takesRequestEvents: Bool = true, endOfBatch: (@Sendable () -> Void)? = nil,
        _ subscriber: @escaping @Sendable (ProxyEvent) -> Void
    ) {
        _ = add(takesRequestEvents: takesRequestEvents, deliver: subscriber, finish: nil, endOfBatch: endOfBatch)
    }

    /// Adds a subscriber that `unsubscribe(_:)` removes again and `finishAll()` ends; nil once `finishAll()` ran (the
    /// proxy stopped: no event will come).
    package func add(
        takesRequestEvents: Bool, deliver: @escaping @Sendable (ProxyEvent) -> Void,
        finish: (@Sendable () -> Void)?, endOfBatch: (@Sendable () -> Void)? = nil
    ) -> Int? {
        let id = state.withLock { state -> Int? in
            guard !state.finished || finish == nil else { return nil }
            state.nextID += 1
            state.subscribers.append(
                Subscriber(
                    id: state.nextID, takesRequestEvents: takesRequestEvents, deliver: deliver, finish: finish,
                    endOfBatch: endOfBatch))
            return state.nextID
        }
        if id != nil, takesRequestEvents { requestSubscribers.add(1, ordering: .relaxed) }
        return id
    }

    /// Removes the subscriber `add` numbered `id` (nothing when it is gone already).
    package func unsubscribe(_ id: Int) {
        let removed = state.withLock { state -> Subscriber? in
            guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return nil }
            return state.subscribers.remove(at: index)
        }
        if removed?.takesRequestEvents == true { requestSubscribers.subtract(1, ordering: .relaxed) }
    }

    /// Ends every subscriber that can end (the event streams), after the events emitted so far reached them; later
    /// streams end at once.
    package func finishAll() {
        flush()
        let finishing = state.withLock { state in
            state.finished = true
            return state.subscribers.compactMap(\.finish)
        }
        for finish in finishing { finish() }
    }

    /// Counts an event a subscriber could not take (an event stream whose buffer is full).
    package func countDropped() { state.withLock { $0.admission.dropped += 1 } }

    /// Whether a subscriber reads `.request` events.
    private var wantsRequestEvents: Bool { requestSubscribers.load(ordering: .relaxed) > 0 }

    /// Queues the `.request` event `make` builds, building it only when a subscriber reads such events (its URL
    /// costs a string per request).
    package func emitRequest(_ make: @autoclosure () -> ProxyEvent) {
        if wantsRequestEvents { emit(make()) }
    }

    /// Queues `event` for the subscribers; returns at once unless the queue is full (see the type's comment).
    package func emit(_ event: consuming ProxyEvent) {
        var event = Optional(event)
        while true {
            let decision = state.withLock { state -> RecordingAdmission.Decision in
                guard !state.subscribers.isEmpty else { return .dropped }
                // A subscriber emitting (findings) runs on the recording queue: waiting there would wait for itself.
                let onQueue =
                    state.pending.count >= capacity && DispatchQueue.getSpecific(key: Self.onRecordingQueue) == true
                let decision = state.admission.emit(
                    queued: state.pending.count, capacity: capacity, mayWait: !onQueue,
                    delivered: delivered.load(ordering: .relaxed))
                guard case .queue = decision, let event = event.take() else { return decision }
                state.pending.append(event)
                guard !state.draining else { return .queue(startDraining: false) }
                state.draining = true
                return .queue(startDraining: true)
            }
            switch decision {
            case .queue(let startDraining):
                if startDraining { queue.async { self.drainAfterCoalescing() } }
                return
            case .dropped:
                return
            case .wait(let deliveredBefore):
                guard roomMade.wait(timeout: .now() + stallTimeout) == .timedOut else { continue }
                let stillCounted = state.withLock { state in
                    state.admission.waitTimedOut(
                        deliveredBefore: deliveredBefore, deliveredNow: delivered.load(ordering: .relaxed))
                }
                // A batch was taken while the wait timed out: its signal for this emitter is on its way.
                if !stillCounted { roomMade.wait() }
            }
        }
    }

    /// How long the recording queue waits after the first undelivered event for others to join it.
    static let coalescingNanoseconds = 5_000_000

    /// Events arriving within the coalescing delay share one wake-up of the recording queue (waking it per event costs
    /// a thread hand-off per request). The queue waits itself: `asyncAfter` would arm a Dispatch timer, which
    /// libdispatch's manager thread serves, one more thread wake-up per batch.
    private func drainAfterCoalescing() {
        var delay = timespec(tv_sec: 0, tv_nsec: Self.coalescingNanoseconds)
        var left = timespec()
        while nanosleep(&delay, &left) != 0 && errno == EINTR { delay = left }
        drain()
    }

    /// Events dropped because the subscribers fell `capacity` events behind.
    package var droppedCount: Int { state.withLock { $0.admission.dropped } }

    /// Blocks until every event emitted before the call has been delivered.
    package func flush() {
        queue.sync { drain() }
    }

    private func drain() {
        while true {
            let (taken, subscribers, batchEnds, waiting) = state.withLock { state in
                let batch = state.pending
                state.pending = state.spare
                state.spare = []
                if batch.isEmpty { state.draining = false }
                return (
                    batch, state.subscribers.map(\.deliver), state.subscribers.compactMap(\.endOfBatch),
                    state.admission.roomMade()
                )
            }
            for _ in 0..<waiting { roomMade.signal() }
            guard !taken.isEmpty else { return }
            // Bound once per event: a subscript per subscriber call would copy the event for each (measured).
            for event in taken {
                for subscriber in subscribers { subscriber(event) }
                delivered.add(1, ordering: .relaxed)
            }
            for endOfBatch in batchEnds { endOfBatch() }
            var batch = consume taken
            batch.removeAll(keepingCapacity: true)
            state.withLock { $0.spare = batch }
        }
    }
}
