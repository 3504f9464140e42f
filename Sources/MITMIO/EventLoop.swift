import Dispatch

/// Receives the readiness of a descriptor registered with an `EventLoop`, on the loop's queue.
protocol ReadinessHandler: AnyObject {
    /// The descriptor became ready for (at least) `readiness` since the last report: edge-triggered, so
    /// nothing is reported again for readiness the handler leaves unconsumed.
    func readinessChanged(_ readiness: Readiness)
}

/// One thread and one serial queue that own a set of sockets: every readiness report, timer and callback
/// of the connections assigned to it runs confined to the queue, so their state needs no locks.
///
/// Why this shape: each loop owns a kernel readiness set (epoll) in which every socket is registered
/// once for its whole life, edge-triggered, and a thread of its own that blocks in `epoll_wait` until a
/// socket is ready, its earliest timer is due (timers are a heap of the loop's, not Dispatch timers) or
/// work is handed to it (`execute`, through the set's eventfd, written only while the thread sleeps).
/// Each turn runs inside `queue.sync`, so the loop's work is still confined to `queue`: what other threads
/// do on the loop (`EventLoop.sync`, a timer cancelled elsewhere) is serialized with it.
/// A thread of its own rather than a Dispatch read source on the epoll descriptor: with a read source each
/// wake-up costs two thread switches (libdispatch's manager thread, then a worker) and every timer armed or
/// cancelled goes through the manager thread; the thread measured fewer switches and less CPU per request
/// (bench/README.md, "Event loop on a Dispatch-hosted epoll set" and "A thread per loop"). Per-socket Dispatch sources are not used: on Linux libdispatch keys its epoll registrations
/// by descriptor number and loses readiness when descriptors are closed and reused at a high rate
/// (swift-corelibs-libdispatch issue 833).
// @unchecked Sendable: the scratch buffers are only touched on `queue`; everything else is immutable.
public final class EventLoop: @unchecked Sendable {
    /// The loop's serial queue: its thread's turns run on it. Other threads enter it through `sync`.
    let queue: DispatchQueue
    /// The loop's position in its group.
    public let index: Int
    /// A 64 KiB buffer that socket reads on this loop fill before handing bytes on; only valid on `queue`.
    let readScratch: UnsafeMutableRawBufferPointer
    /// A 64 KiB buffer for decrypted data on this loop; only valid on `queue`, within one callback.
    public let plaintextScratch: UnsafeMutableRawBufferPointer
    /// The writes of the read being delivered, sent together at its end; only used on `queue`.
    public let writeBatch = WriteBatch()

    private let core: LoopCore

    /// Creates a loop with its own queue, readiness set and thread. Traps when the kernel refuses a
    /// readiness set or a thread (at start-up): there is nothing a proxy could do without them.
    public init(index: Int, label: String = EventLoop.defaultLabel) {
        self.index = index
        queue = DispatchQueue(label: "\(label).\(index)", qos: .userInitiated)
        readScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        plaintextScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        let readiness: any ReadinessSet
        do {
            readiness = try EpollReadinessSet()
        } catch {
            fatalError("cannot create the event loop's readiness set: \(error)")
        }
        let core = LoopCore(queue: queue, readiness: readiness)
        self.core = core
        LoopThread.start(name: Self.threadName(label: label, index: index)) { core.run() }
    }

    /// The label of the proxy's own loops.
    public static let defaultLabel = "mitm-proxy.loop"

    /// `mitm-loop-0` for the proxy's loops, `mitm-` and the label's last part for others (as `ps -T` shows them).
    private static func threadName(label: String, index: Int) -> String {
        let kind = label.split(separator: ".").last.map(String.init) ?? "loop"
        return label == defaultLabel ? "mitm-\(kind)-\(index)" : "mitm-\(kind)"
    }

    deinit {
        core.stop()
        readScratch.deallocate()
        plaintextScratch.deallocate()
    }

    /// Whether the caller is running on this loop's queue.
    public var isCurrent: Bool { core.isCurrent }

    /// Runs `work` on the loop, in a later turn than the caller's.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        core.enqueue(work)
    }

    /// Runs `work` on the loop's queue and returns its result, after the work handed over with `execute`
    /// before this call (so a `sync` sees what an earlier `execute` did). Not from the loop itself.
    public func sync<T>(_ work: () throws -> T) rethrows -> T {
        precondition(!isCurrent, "EventLoop.sync from its own loop would wait for itself")
        return try queue.sync {
            core.runHandedOverWork()
            return try work()
        }
    }

    /// Runs `work` on the loop after `seconds` (at once for zero, negative or NaN); cancel or drop the returned
    /// timer to stop it.
    public func schedule(after seconds: Double, _ work: @escaping @Sendable () -> Void) -> LoopTimer {
        let nanoseconds = seconds > 0 ? seconds * 1_000_000_000 : 0
        return core.schedule(afterNanoseconds: nanoseconds < 1.8e19 ? UInt64(nanoseconds) : UInt64.max, work)
    }

    /// Adds `fd` to the loop's readiness set for its whole life; returns the token to deregister it with.
    /// `exclusive`: a listening socket other loops watch too; a connection wakes one of them. The handler is held
    /// weakly. Only on `queue`.
    func register(_ fd: Int32, interest: Readiness, exclusive: Bool = false, handler: ReadinessHandler)
        throws(SystemCallError) -> UInt64
    {
        try core.register(fd, interest: interest, exclusive: exclusive, handler: handler)
    }

    /// Adds the descriptor of `socket` for reading and writing; returns its token. The socket is not retained: it
    /// forgets its token (`forgetClosing(token:)`) in `close`, which its deinit calls. Only on `queue`.
    func register(_ socket: StreamSocket) throws(SystemCallError) -> UInt64 {
        try core.register(socket)
    }

    /// Removes `fd` from the readiness set; the caller closes it right after. On `queue`, or from a
    /// deinit elsewhere (the kernel side is thread-safe; the entry is dropped after the loop's current turn).
    func deregister(_ fd: Int32, token: UInt64) {
        core.deregister(fd, token: token)
    }

    /// Forgets the descriptor registered with `token`, which the caller closes right after (closing removes it from
    /// the kernel's set). Where `deregister` may be called.
    func forgetClosing(token: UInt64) {
        core.forget(token)
    }

    /// Calls `turnRequested()` on the socket registered with `token` in a later turn, if it is registered still;
    /// the request does not keep the socket alive. Only on `queue`.
    func requestTurn(token: UInt64) {
        core.requestTurn(token)
    }
}
