import Synchronization

/// Work handed to a loop from any thread; the loop takes it a batch at a time.
final class WorkInbox: Sendable {
    private let pending = Mutex<[@Sendable () -> Void]>([])

    func append(_ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(work) }
    }

    var isEmpty: Bool { pending.withLock { $0.isEmpty } }

    /// Moves everything handed over so far into `batch` (expected empty), keeping `batch`'s old storage for the next.
    func takeAll(into batch: inout [@Sendable () -> Void]) {
        pending.withLock { swap(&$0, &batch) }
    }

    func removeAll() {
        pending.withLock { $0.removeAll() }
    }
}
