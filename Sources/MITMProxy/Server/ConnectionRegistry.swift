import Dispatch
import MITMIO

/// Something the registry can time out and close.
protocol ManagedConnection: AnyObject {
    /// Monotonic nanoseconds after which the connection should be told it timed out.
    var deadline: UInt64 { get }
    /// The deadline passed.
    func timedOut()
    /// The proxy is stopping: close at once.
    func closeForShutdown()
    /// Called about every quarter second: a chance to shrink an idle connection's buffers.
    func sweep(now: UInt64)
}

/// The connections living on one loop, with one sweeper timer that enforces their deadlines
/// (cheaper than a timer per connection, and deadlines move with every read).
// @unchecked Sendable: all state is touched on the loop's queue only.
final class ConnectionRegistry: @unchecked Sendable {
    private let loop: EventLoop
    private let clock: ProxyClock
    private var connections: [ObjectIdentifier: ManagedConnection] = [:]
    private var sweeper: (any ClockTimer)?
    private static let sweepInterval = 0.25

    init(loop: EventLoop, clock: ProxyClock) {
        self.loop = loop
        self.clock = clock
    }

    var count: Int { connections.count }

    func add(_ connection: ManagedConnection) {
        connections[ObjectIdentifier(connection)] = connection
        if sweeper == nil { startSweeper() }
    }

    func remove(_ connection: ManagedConnection) {
        connections.removeValue(forKey: ObjectIdentifier(connection))
    }

    func closeAll() {
        let all = Array(connections.values)
        connections.removeAll()
        all.forEach { $0.closeForShutdown() }
        sweeper?.cancel()
        sweeper = nil
    }

    private func startSweeper() {
        sweeper = clock.schedule(after: Self.sweepInterval, on: loop) { [weak self] in
            guard let self else { return }
            sweep()
            startSweeper()
        }
    }

    /// Times out every connection whose deadline passed (the sweeper's tick; tests call it directly).
    func sweep() {
        let now = clock.now()
        let expired = connections.values.filter { $0.deadline <= now }
        expired.forEach { $0.timedOut() }
        connections.values.forEach { $0.sweep(now: now) }
        if !MemoryTrim.trimIfDue(now: now) { MemoryTrim.trimAfterRelease(now: now) }
    }
}
