import Dispatch
import Synchronization

/// Events posted from an event loop, awaited by a test one at a time; a wait gives up (nil) after a
/// deadline so that a lost event fails the test instead of hanging it.
final class EventInbox<Event: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Event?, Never>
    }

    private struct State {
        var events: [Event] = []
        var waiter: Waiter?
        var lastWaiterID = 0
    }

    private let state = Mutex(State())

    /// Hands `event` to the waiting test, or keeps it for the next wait.
    func post(_ event: Event) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state.waiter else {
                state.events.append(event)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.continuation.resume(returning: event)
    }

    /// Whether no event is kept for a wait.
    var isEmpty: Bool { state.withLock { $0.events.isEmpty } }

    /// The next event, or nil when none came within `seconds`.
    func next(within seconds: Double = 10) async -> Event? {
        await withCheckedContinuation { continuation in
            let waiterID = state.withLock { state -> Int? in
                if !state.events.isEmpty {
                    continuation.resume(returning: state.events.removeFirst())
                    return nil
                }
                state.lastWaiterID += 1
                state.waiter = Waiter(id: state.lastWaiterID, continuation: continuation)
                return state.lastWaiterID
            }
            guard let waiterID else { return }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                let expired = state.withLock { state -> Waiter? in
                    guard let waiter = state.waiter, waiter.id == waiterID else { return nil }
                    state.waiter = nil
                    return waiter
                }
                expired?.continuation.resume(returning: nil)
            }
        }
    }
}
