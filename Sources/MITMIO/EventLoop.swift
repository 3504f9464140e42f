import CMITMShims
import Dispatch
import Synchronization

/// One serial queue that owns a set of sockets: every source handler, timer and callback of the
/// connections assigned to it runs here, so their state needs no locks.
// @unchecked Sendable: the scratch buffer is only touched on `queue`; everything else is immutable.
public final class EventLoop: @unchecked Sendable {
    /// The loop's serial queue.
    public let queue: DispatchQueue
    /// The loop's position in its group.
    public let index: Int
    /// A 64 KiB buffer that socket reads on this loop fill before handing bytes on; only valid on `queue`.
    let readScratch: UnsafeMutableRawBufferPointer
    /// A 64 KiB buffer for decrypted data on this loop; only valid on `queue`, within one callback.
    public let plaintextScratch: UnsafeMutableRawBufferPointer
    private static let loopKey = DispatchSpecificKey<Int>()

    /// Creates a loop with its own queue.
    public init(index: Int, label: String = "mitm-proxy.loop") {
        self.index = index
        queue = DispatchQueue(label: "\(label).\(index)", qos: .userInitiated)
        queue.setSpecific(key: Self.loopKey, value: index)
        readScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        plaintextScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
    }

    deinit {
        readScratch.deallocate()
        plaintextScratch.deallocate()
    }

    /// Whether the caller is running on this loop's queue.
    public var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.loopKey) == index }

    /// Runs `work` on the loop.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Runs `work` on the loop after `seconds`; cancel the returned timer to stop it.
    public func schedule(after seconds: Double, _ work: @escaping @Sendable () -> Void) -> LoopTimer {
        LoopTimer(queue: queue, after: seconds, work)
    }
}

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

/// A fixed set of event loops, one per core, handed out round-robin.
public final class EventLoopGroup: Sendable {
    /// The loops.
    public let loops: [EventLoop]
    private let nextIndex = Atomic<Int>(0)

    /// Creates `count` loops (default: one per active core).
    public init(count: Int = System.coreCount) {
        loops = (0..<max(1, count)).map { EventLoop(index: $0) }
    }

    /// The next loop in turn.
    public func next() -> EventLoop {
        let value = nextIndex.add(1, ordering: .relaxed).oldValue
        return loops[value % loops.count]
    }
}

/// Machine facts.
public enum System {
    /// Returns freed heap pages to the system (glibc keeps them in its arenas otherwise).
    public static func releaseFreeMemory() {
        _ = mitm_release_free_memory()
    }

    /// Number of cores available to this process.
    public static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}

#if canImport(Glibc)
import Glibc
#endif
