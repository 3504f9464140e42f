import CMITMShims
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What an `EventLoop`'s thread runs: the readiness set, the handler table, the timers and the inbox of
/// work handed to the loop, and the turn that serves them. Kept apart from `EventLoop` so that the thread
/// does not keep its loop alive: dropping the loop stops the thread.
// @unchecked Sendable: `handlers`, `nextToken`, `timers` and `spareInbox` are only touched on `queue`
// (the loop's thread inside `queue.sync`, or a block submitted to the queue); the rest is atomic, locked
// or immutable.
final class LoopCore: @unchecked Sendable {
    let queue: DispatchQueue
    private let readiness: any ReadinessSet
    private let identity: Int
    private static let loopKey = DispatchSpecificKey<Int>()
    private static let identities = Atomic<Int>(0)

    /// Sockets and other handlers by token. Tokens are never reused, so an event already fetched for a descriptor that
    /// was closed meanwhile finds no handler (or a dead one) instead of the descriptor's next owner.
    /// Sockets are not retained: a socket leaves the table in `close`, which its deinit calls, before its memory goes
    /// (see `forget`). A weak reference would give every socket a side table, and each retain and release of it the
    /// slow path.
    private var sockets: [UInt64: Unmanaged<StreamSocket>] = [:]
    /// Handlers that may go away on another thread (listeners), held weakly.
    private var handlers: [UInt64: WeakHandler] = [:]
    private var nextToken: UInt64 = 1
    private var timers = TimerHeap()
    private let timerSequence = Atomic<UInt64>(0)
    private let inbox = WorkInbox()
    private var spareInbox: [@Sendable () -> Void] = []
    /// Tokens whose handlers asked for a turn from the loop's thread, served after the handed-over work: a read turn
    /// per connection or two, which then needs no closure and no lock. Touched by the loop's thread only.
    private var turnRequests: [UInt64] = []
    private var spareTurnRequests: [UInt64] = []
    /// Whether the thread is (about to be) blocked in `wait`: work handed over then must wake it.
    private let sleeping = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let thread = Atomic<UInt>(0)
    private static let eventCapacity = 64

    init(queue: DispatchQueue, readiness: any ReadinessSet) {
        self.queue = queue
        self.readiness = readiness
        identity = Self.identities.add(1, ordering: .relaxed).newValue
        queue.setSpecific(key: Self.loopKey, value: identity)
    }

    /// Whether the caller runs on the loop's queue (its thread's turn, or a block submitted to the queue). The thread
    /// runs code only inside `queue.sync`, so it is asked first: no queue-specific lookup for the common case.
    var isCurrent: Bool { isLoopThread || DispatchQueue.getSpecific(key: Self.loopKey) == identity }

    /// Whether the caller is the loop's own thread.
    private var isLoopThread: Bool { thread.load(ordering: .relaxed) == UInt(pthread_self()) }

    // MARK: - The thread

    /// The loop's thread: wait for readiness, the next timer or handed-over work, then serve them in one
    /// turn on the queue; until `stop()`.
    func run() {
        thread.store(UInt(pthread_self()), ordering: .releasing)
        let events = UnsafeMutableBufferPointer<ReadyEvent>.allocate(capacity: Self.eventCapacity)
        defer { events.deallocate() }
        var timeout: Int32 = -1
        while true {
            sleeping.store(true, ordering: .sequentiallyConsistent)
            let workWaiting = !inbox.isEmpty || !turnRequests.isEmpty
            let count = readiness.wait(into: events, timeoutMilliseconds: workWaiting ? 0 : timeout)
            sleeping.store(false, ordering: .relaxed)
            if stopping.load(ordering: .acquiring) { break }
            timeout = queue.sync { turn(events: UnsafeMutableBufferPointer(rebasing: events[0..<count])) }
        }
        queue.sync {
            timers.removeAll()
            sockets.removeAll()
            handlers.removeAll()
            inbox.removeAll()
            turnRequests.removeAll()
        }
        readiness.close()
    }

    /// Ends the thread after its current turn. Any thread.
    func stop() {
        stopping.store(true, ordering: .releasing)
        readiness.wake()
    }

    /// One turn: the ready descriptors, then the work handed over so far (what their handlers handed over
    /// included), the turns asked for and what they handed over, then the timers due. Returns how long the next wait may block.
    private func turn(events: UnsafeMutableBufferPointer<ReadyEvent>) -> Int32 {
        for event in events {
            if event.token == ReadyEvent.wakeToken {
                readiness.acknowledgeWake()
            } else {
                if let socket = sockets[event.token] {
                    socket.takeUnretainedValue().readinessChanged(event.readiness)
                } else {
                    handlers[event.token]?.handler?.readinessChanged(event.readiness)
                }
            }
        }
        runHandedOverWork()
        // What the turns handed over (a resolved name, a finished lookup) goes on before the next descriptors are
        // read: a new connection's first read asks for its upstream, which must not wait behind the client's next bytes.
        if serveTurnRequests(), !inbox.isEmpty { runHandedOverWork() }
        guard !timers.isEmpty else { return -1 }
        let now = mitm_monotonic_nanoseconds()
        for entry in timers.popDue(at: now) {
            let work = entry.work
            entry.work = nil
            work?()
        }
        guard let earliest = timers.earliestDeadline else { return -1 }
        let later = mitm_monotonic_nanoseconds()
        guard earliest > later else { return 0 }
        return Int32(clamping: (earliest - later + 999_999) / 1_000_000)
    }

    // MARK: - Work handed to the loop

    /// Runs the work enqueued so far (what enqueues it meanwhile waits for the next turn). On `queue`.
    func runHandedOverWork() {
        inbox.takeAll(into: &spareInbox)
        for work in spareInbox { work() }
        spareInbox.removeAll(keepingCapacity: true)
    }

    /// Runs `work` on the loop's thread in a later turn. Any thread.
    func enqueue(_ work: @escaping @Sendable () -> Void) {
        inbox.append(work)
        if !isLoopThread && sleeping.load(ordering: .sequentiallyConsistent) { readiness.wake() }
    }

    /// Calls `turnRequested()` on the socket of `token` in a later turn if it is still registered then. On `queue`.
    func requestTurn(_ token: UInt64) {
        if isLoopThread {
            turnRequests.append(token)
        } else {
            enqueue { [self] in sockets[token]?.takeUnretainedValue().turnRequested() }
        }
    }

    /// The turns asked for so far (what they ask for meanwhile waits for the next turn); whether there were any. On the
    /// loop's thread.
    private func serveTurnRequests() -> Bool {
        guard !turnRequests.isEmpty else { return false }
        swap(&turnRequests, &spareTurnRequests)
        for token in spareTurnRequests { sockets[token]?.takeUnretainedValue().turnRequested() }
        spareTurnRequests.removeAll(keepingCapacity: true)
        return true
    }

    // MARK: - Timers

    /// Arms a timer due `nanoseconds` from now. Any thread.
    func schedule(afterNanoseconds nanoseconds: UInt64, _ work: @escaping @Sendable () -> Void) -> LoopTimer {
        let now = mitm_monotonic_nanoseconds()
        let deadline = nanoseconds > UInt64.max - now ? UInt64.max : now + nanoseconds
        let sequence = timerSequence.add(1, ordering: .relaxed).newValue
        let entry = TimerEntry(deadline: deadline, sequence: sequence, work: work)
        if isCurrent {
            timers.insert(entry)
            // The thread computes its wait from the heap at the end of its turn; anyone else wakes it.
            if !isLoopThread { readiness.wake() }
        } else {
            queue.async { [self] in
                guard entry.work != nil else { return }
                timers.insert(entry)
                readiness.wake()
            }
        }
        return LoopTimer(entry: entry, core: self)
    }

    /// Disarms `entry` if it has not fired. Any thread.
    func cancel(_ entry: TimerEntry) {
        if isCurrent {
            timers.remove(entry)
            entry.work = nil
        } else {
            queue.async { [self] in
                timers.remove(entry)
                entry.work = nil
            }
        }
    }

    // MARK: - Descriptors

    /// Adds `fd` to the readiness set for its whole life; returns its token. On `queue`.
    func register(_ fd: Int32, interest: Readiness, exclusive: Bool, handler: ReadinessHandler) throws(SystemCallError)
        -> UInt64
    {
        let token = try add(fd, interest: interest, exclusive: exclusive)
        handlers[token] = WeakHandler(handler: handler)
        return token
    }

    /// Adds the descriptor of `socket`, which forgets its token before it goes away; returns the token. On `queue`.
    func register(_ socket: StreamSocket) throws(SystemCallError) -> UInt64 {
        let token = try add(socket.descriptor, interest: [.readable, .writable], exclusive: false)
        sockets[token] = Unmanaged.passUnretained(socket)
        return token
    }

    private func add(_ fd: Int32, interest: Readiness, exclusive: Bool) throws(SystemCallError) -> UInt64 {
        assert(isCurrent, "sockets join a loop's readiness set on the loop's queue")
        let token = nextToken
        nextToken += 1
        try readiness.register(fd, interest: interest, token: token, exclusive: exclusive)
        return token
    }

    /// Removes `fd` from the readiness set. On `queue`, or from a deinit elsewhere (the kernel side is thread-safe).
    func deregister(_ fd: Int32, token: UInt64) {
        readiness.deregister(fd)
        forget(token)
    }

    /// Drops the handler of `token`, whose descriptor the caller closes at once: closing takes it out of the readiness
    /// set (`EPOLL_CTL_DEL` would be one more system call per connection), and an event already fetched for it finds
    /// no handler, as tokens are never reused. Where `deregister` may be called. From elsewhere it waits for the loop's
    /// turn to end: a socket's deinit must not return (and free the socket) while the table still names it.
    func forget(_ token: UInt64) {
        if isCurrent {
            sockets[token] = nil
            handlers[token] = nil
        } else {
            queue.sync {
                sockets[token] = nil
                handlers[token] = nil
            }
        }
    }
}

/// A handler table entry that does not keep its handler alive.
private struct WeakHandler {
    weak var handler: (any ReadinessHandler)?
}
