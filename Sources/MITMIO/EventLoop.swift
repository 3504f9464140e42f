import CMITMShims
import Dispatch
import Synchronization

/// Receives the readiness of a descriptor registered with an `EventLoop`, on the loop's queue.
protocol ReadinessHandler: AnyObject {
    /// The descriptor became ready for (at least) `readiness` since the last report: edge-triggered, so
    /// nothing is reported again for readiness the handler leaves unconsumed.
    func readinessChanged(_ readiness: Readiness)
}

/// One serial queue that owns a set of sockets: every readiness report, timer and callback of the
/// connections assigned to it runs here, so their state needs no locks.
///
/// Why this shape: each loop owns a kernel readiness set (epoll) in which every socket is registered
/// once for its whole life, edge-triggered, and a single `DispatchSourceRead` on the set's own
/// descriptor (registered once, for the loop's life) wakes the queue, which drains the ready events
/// inline. Per-socket Dispatch sources are not used: on Linux libdispatch keys its epoll registrations
/// by descriptor number and loses readiness when descriptors are closed and reused at a high rate
/// (swift-corelibs-libdispatch issue 833), and it re-arms a one-shot registration and queries
/// `FIONREAD` for every event. Hosting the set on Dispatch, rather than on a thread of its own blocking
/// in `epoll_wait`, keeps Dispatch timers and `async` on the same queue, so a connection's state stays
/// confined to it with no timer heap or wake-up descriptor of our own (bench/README.md has the figures).
// @unchecked Sendable: the handler table, the event buffer and the scratch buffers are only touched on
// `queue`; everything else is immutable.
public final class EventLoop: @unchecked Sendable {
    /// The loop's serial queue.
    public let queue: DispatchQueue
    /// The loop's position in its group.
    public let index: Int
    /// A 64 KiB buffer that socket reads on this loop fill before handing bytes on; only valid on `queue`.
    let readScratch: UnsafeMutableRawBufferPointer
    /// A 64 KiB buffer for decrypted data on this loop; only valid on `queue`, within one callback.
    public let plaintextScratch: UnsafeMutableRawBufferPointer

    private let readiness: any ReadinessSet
    private let wakeSource: DispatchSourceRead
    private let events: UnsafeMutableBufferPointer<ReadyEvent>
    /// Handlers by token. Tokens are never reused, so an event already fetched for a descriptor that
    /// was closed meanwhile finds no handler (or a dead one) instead of the descriptor's next owner.
    private var handlers: [UInt64: WeakHandler] = [:]
    private var nextToken: UInt64 = 1
    private let identity: Int
    private static let loopKey = DispatchSpecificKey<Int>()
    private static let identities = Atomic<Int>(0)
    /// How many batches of ready events one queue turn handles before letting timers and `async` run.
    private static let batchesPerTurn = 4

    /// Creates a loop with its own queue and readiness set. Traps when the kernel refuses a readiness
    /// set (out of descriptors at start-up): there is nothing a proxy could do without one.
    public init(index: Int, label: String = "mitm-proxy.loop") {
        self.index = index
        identity = Self.identities.add(1, ordering: .relaxed).newValue
        queue = DispatchQueue(label: "\(label).\(index)", qos: .userInitiated)
        queue.setSpecific(key: Self.loopKey, value: identity)
        readScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        plaintextScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        events = UnsafeMutableBufferPointer<ReadyEvent>.allocate(capacity: 64)
        do {
            readiness = try EpollReadinessSet()
        } catch {
            fatalError("cannot create the event loop's readiness set: \(error)")
        }
        wakeSource = DispatchSource.makeReadSource(fileDescriptor: readiness.descriptor, queue: queue)
        wakeSource.setEventHandler { [weak self] in self?.drain() }
        wakeSource.setCancelHandler { [readiness] in readiness.close() }
        wakeSource.activate()
    }

    deinit {
        wakeSource.cancel()
        readScratch.deallocate()
        plaintextScratch.deallocate()
        events.deallocate()
    }

    /// Whether the caller is running on this loop's queue.
    public var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.loopKey) == identity }

    /// Runs `work` on the loop.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Runs `work` on the loop after `seconds`; cancel the returned timer to stop it.
    public func schedule(after seconds: Double, _ work: @escaping @Sendable () -> Void) -> LoopTimer {
        LoopTimer(queue: queue, after: seconds, work)
    }

    /// Adds `fd` to the loop's readiness set for its whole life; returns the token to deregister it with.
    /// Only on `queue`.
    func register(_ fd: Int32, interest: Readiness, handler: ReadinessHandler) throws(SystemCallError) -> UInt64 {
        assert(isCurrent, "sockets join a loop's readiness set on the loop's queue")
        let token = nextToken
        nextToken += 1
        handlers[token] = WeakHandler(handler: handler)
        do {
            try readiness.register(fd, interest: interest, token: token)
        } catch {
            handlers[token] = nil
            throw error
        }
        return token
    }

    /// Removes `fd` from the readiness set; the caller closes it right after. On `queue`, or from a
    /// deinit elsewhere (the kernel side is thread-safe; the handler entry is then dropped on the loop).
    func deregister(_ fd: Int32, token: UInt64) {
        readiness.deregister(fd)
        if isCurrent {
            handlers[token] = nil
        } else {
            queue.async { [weak self] in self?.handlers[token] = nil }
        }
    }

    /// Hands pending events to their handlers until the set is empty, a bounded number of batches per
    /// queue turn. Events that arrive while a batch is handled are taken in the same turn.
    private func drain() {
        for _ in 0..<Self.batchesPerTurn {
            let count = readiness.poll(into: events)
            if count == 0 { return }
            for slot in 0..<count {
                let event = events[slot]
                let handler = handlers[event.token]?.handler
                handler?.readinessChanged(event.readiness)
            }
        }
        // More may be pending: continue after the timers and work queued meanwhile.
        queue.async { [weak self] in self?.drain() }
    }
}

/// A handler table entry that does not keep its socket alive (an owner that drops a socket closes it).
private struct WeakHandler {
    weak var handler: (any ReadinessHandler)?
}
