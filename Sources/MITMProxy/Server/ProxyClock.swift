import Dispatch
import Foundation
import MITMIO

/// A timer armed on a `ProxyClock`. Cancelling it, or dropping the last reference to it, disarms it.
protocol ClockTimer: AnyObject, Sendable {
    /// Disarms the timer if it has not fired. Cancelling twice does nothing.
    func cancel()
}

extension LoopTimer: ClockTimer {}

/// The proxy's one clock: monotonic time in nanoseconds for deadlines and durations, the wall clock for records, and
/// the timers. Everything that times the engine (connection deadlines, the silence window, rule delays, throttling,
/// the upstream pool's idle time, the spare-connection desk, breakpoint pauses) reads the context's clock and arms its timers on it, so a
/// test that drives a connection's life passes one it moves by hand, and its timers fire as it moves.
struct ProxyClock: Sendable {
    /// Monotonic nanoseconds.
    let now: @Sendable () -> UInt64
    /// The date and time of day, for what is recorded (an exchange's start, a verdict's time).
    let wallNow: @Sendable () -> Date
    private let arm: @Sendable (UInt64, EventLoop, @escaping @Sendable () -> Void) -> any ClockTimer

    /// A clock reading `now` and `wallNow`; `arm(deadline, loop, work)` runs `work` on `loop` once `now()` reaches
    /// `deadline` (at once when it has passed), unless the timer it returns is cancelled or dropped first.
    init(
        now: @escaping @Sendable () -> UInt64, wallNow: @escaping @Sendable () -> Date,
        arm: @escaping @Sendable (UInt64, EventLoop, @escaping @Sendable () -> Void) -> any ClockTimer
    ) {
        self.now = now
        self.wallNow = wallNow
        self.arm = arm
    }

    /// The system's monotonic clock and wall clock; timers are the loops' own.
    static let system = ProxyClock(now: { DispatchTime.now().uptimeNanoseconds }, wallNow: { Date() }) {
        deadline, loop, work in
        let now = DispatchTime.now().uptimeNanoseconds
        return loop.schedule(after: Double(deadline &- min(deadline, now)) / 1e9, work)
    }

    /// Runs `work` on `loop` once the clock reaches `deadline` (monotonic nanoseconds; `UInt64.max` is never).
    /// Keep the timer: dropping it disarms it.
    func schedule(at deadline: UInt64, on loop: EventLoop, _ work: @escaping @Sendable () -> Void) -> any ClockTimer {
        arm(deadline, loop, work)
    }

    /// Runs `work` on `loop` `seconds` from now (see `deadline(_:after:)` for odd durations).
    func schedule(after seconds: Double, on loop: EventLoop, _ work: @escaping @Sendable () -> Void) -> any ClockTimer {
        arm(after(seconds: seconds), loop, work)
    }

    /// Runs `work` on `loop` `duration` from now (see `deadline(_:after:)` for odd durations).
    func schedule(after duration: Duration, on loop: EventLoop, _ work: @escaping @Sendable () -> Void)
        -> any ClockTimer
    {
        arm(after(duration), loop, work)
    }

    /// `seconds` from now, saturating (see `deadline(_:after:)`).
    func after(seconds: Double) -> UInt64 { Self.deadline(seconds, after: now()) }

    /// `duration` from now, saturating (see `deadline(_:after:)`).
    func after(_ duration: Duration) -> UInt64 { Self.deadline(duration, after: now()) }

    /// Now in seconds, for arithmetic in seconds (the spare-connection judge, the credential back-off).
    var nowInSeconds: Double { Double(now()) / 1e9 }

    /// Milliseconds from `start` (monotonic nanoseconds) to now: how long something took.
    func milliseconds(since start: UInt64) -> Double {
        let end = now()
        return Double(end &- min(end, start)) / 1e6
    }

    /// Milliseconds since 1970, as the web UI shows times.
    var wallMilliseconds: Double { wallNow().timeIntervalSince1970 * 1000 }

    /// `start` plus `seconds`, saturating: a negative or NaN duration is `start`, one beyond the clock's range is never.
    static func deadline(_ seconds: Double, after start: UInt64) -> UInt64 {
        ConnectionDeadline.instant(seconds, after: start)
    }

    /// `start` plus `duration`, saturating: a negative duration is `start`, one beyond the clock's range is never.
    static func deadline(_ duration: Duration, after start: UInt64) -> UInt64 {
        ConnectionDeadline.instant(duration, after: start)
    }
}
