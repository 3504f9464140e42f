import Dispatch
import Foundation

/// The proxy's one clock: monotonic time in nanoseconds, and the wall time stamped on what users read. Everything that
/// times the engine (connection deadlines, throttling, the upstream pool's idle time, the spare-connection desk's
/// silence window, breakpoint pauses) reads the context's clock, so a test that drives a connection's life passes one
/// it moves by hand.
struct ProxyClock: Sendable {
    let now: @Sendable () -> UInt64
    /// Seconds since 1970.
    let wallNow: @Sendable () -> Double

    init(now: @escaping @Sendable () -> UInt64, wallNow: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.now = now
        self.wallNow = wallNow
    }

    /// The system's monotonic clock.
    static let system = ProxyClock { DispatchTime.now().uptimeNanoseconds }

    /// `seconds` from now, saturating (see `deadline(_:after:)`).
    func after(seconds: Double) -> UInt64 { Self.deadline(seconds, after: now()) }

    /// Now in seconds, for the verdict desk's arithmetic.
    var nowInSeconds: Double { Double(now()) / 1e9 }

    /// Milliseconds since 1970, as the web UI shows times.
    var wallMilliseconds: Double { wallNow() * 1000 }

    /// `start` plus `seconds`, saturating: a negative or NaN duration is `start`, one beyond the clock's range is never.
    static func deadline(_ seconds: Double, after start: UInt64) -> UInt64 {
        guard seconds > 0 else { return start }
        let nanoseconds = seconds * 1_000_000_000
        guard nanoseconds < Double(UInt64.max - start) else { return UInt64.max }
        return start + UInt64(nanoseconds)
    }
}
