import MITMIO
import Synchronization

/// Hands freed heap pages back to the system now and then: buffers given back by idle connections
/// otherwise stay in the allocator's arenas and in the process's resident size.
enum MemoryTrim {
    private static let lastTrim = Atomic<UInt64>(0)
    private static let interval: UInt64 = 2_000_000_000
    /// How soon after the last trim a connection turning idle has the next one done.
    private static let intervalAfterRelease: UInt64 = 250_000_000
    private static let released = Atomic<Bool>(false)

    /// Trims when `interval` has passed since the last trim; whether it trimmed. Loops call this concurrently, so
    /// `now` may be older than the `lastTrim` another loop just stored.
    @discardableResult
    static func trimIfDue(now: UInt64) -> Bool {
        trim(now: now, after: interval)
    }

    /// A connection turned idle and gave back its buffers: the next `trimAfterRelease` hands them to the system.
    static func idleMemoryReleased() {
        released.store(true, ordering: .relaxed)
    }

    /// Trims when a connection turned idle since the last trim, at most every `intervalAfterRelease`: the buffers
    /// of clients that went quiet leave the resident size within a sweep or two, not up to `interval` later.
    /// Connections carrying requests back to back never turn idle, so a busy proxy trims no more often than before.
    @discardableResult
    static func trimAfterRelease(now: UInt64) -> Bool {
        guard released.load(ordering: .relaxed) else { return false }
        return trim(now: now, after: intervalAfterRelease)
    }

    private static func trim(now: UInt64, after wait: UInt64) -> Bool {
        let last = lastTrim.load(ordering: .relaxed)
        guard now >= last, now - last >= wait,
            lastTrim.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return false }
        released.store(false, ordering: .relaxed)
        System.releaseFreeMemory()
        return true
    }
}
