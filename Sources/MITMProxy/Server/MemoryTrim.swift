import MITMIO
import Synchronization

/// Hands freed heap pages back to the system now and then: buffers given back by idle connections
/// otherwise stay in the allocator's arenas and in the process's resident size.
enum MemoryTrim {
    private static let lastTrim = Atomic<UInt64>(0)
    private static let interval: UInt64 = 2_000_000_000

    /// Trims when `interval` has passed since the last trim; whether it trimmed. Loops call this concurrently, so
    /// `now` may be older than the `lastTrim` another loop just stored.
    @discardableResult
    static func trimIfDue(now: UInt64) -> Bool {
        let last = lastTrim.load(ordering: .relaxed)
        guard now >= last, now - last >= interval,
            lastTrim.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return false }
        System.releaseFreeMemory()
        return true
    }
}
