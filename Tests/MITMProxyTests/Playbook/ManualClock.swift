import Foundation
import MITMIO
import Synchronization

@testable import MITMProxy

/// A clock the test moves by hand. Timers armed on it fire only as it moves: `advance` steps time to each due timer
/// in deadline order and runs it on its loop, so the engine sees every deadline at its own time, never late.
final class ManualClock: Sendable {
    private struct Armed {
        let at: UInt64
        let order: Int
        let loop: EventLoop
        let timer: ManualTimer.Work
    }

    private struct State {
        var now: UInt64 = 1_000_000_000_000
        var armed: [Armed] = []
        var nextOrder = 0
    }

    private let state = Mutex(State())
    /// The wall time at the clock's start: 2026-01-01 00:00:00 UTC.
    private static let wallStart = Date(timeIntervalSince1970: 1_767_225_600)
    private static let start: UInt64 = 1_000_000_000_000

    var clock: ProxyClock {
        ProxyClock(
            now: { [self] in now },
            wallNow: { [self] in Self.wallStart.addingTimeInterval(Double(now - Self.start) / 1e9) }
        ) {
            [self] deadline, loop, work in
            let timer = ManualTimer(work)
            state.withLock { state in
                state.armed.append(Armed(at: deadline, order: state.nextOrder, loop: loop, timer: timer.work))
                state.nextOrder += 1
            }
            return timer
        }
    }

    /// Monotonic nanoseconds.
    var now: UInt64 { state.withLock { $0.now } }

    /// Timers armed and neither fired nor cancelled.
    var armedCount: Int { state.withLock { state in state.armed.count { !$0.timer.isCancelled } } }

    /// Moves time on by `duration`, firing each timer that falls due on the way at its deadline; `settle` runs after
    /// each (to let what the timer set moving arrive). Not from a loop.
    func advance(by duration: Duration, settle: () -> Void = {}) {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        let target = state.withLock { $0.now + nanoseconds }
        fireDue(upTo: target, settle: settle)
    }

    /// Moves time on by `seconds` (rounded to the nanosecond), as `advance(by:)` does.
    func advance(seconds: Double, settle: () -> Void = {}) {
        advance(by: .nanoseconds(Int64((seconds * 1e9).rounded())), settle: settle)
    }

    /// Fires the timers already due without moving time (a timer armed for now or earlier fires at once on a loop).
    func fireDue(settle: () -> Void = {}) {
        fireDue(upTo: now, settle: settle)
    }

    /// Drops every armed timer unfired (their work may hold what holds this clock).
    func disarmAll() {
        let armed = state.withLock { state in
            defer { state.armed.removeAll() }
            return state.armed
        }
        for entry in armed { entry.timer.cancel() }
    }

    private func fireDue(upTo target: UInt64, settle: () -> Void) {
        while let due = takeNext(upTo: target) {
            due.loop.sync { due.timer.fire() }
            settle()
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    /// Removes the earliest live timer due by `target` and moves time to its deadline.
    private func takeNext(upTo target: UInt64) -> Armed? {
        state.withLock { state in
            state.armed.removeAll { $0.timer.isCancelled }
            guard
                let index = state.armed.indices.filter({ state.armed[$0].at <= target })
                    .min(by: {
                        (state.armed[$0].at, state.armed[$0].order) < (state.armed[$1].at, state.armed[$1].order)
                    })
            else { return nil }
            let due = state.armed.remove(at: index)
            state.now = max(state.now, due.at)
            return due
        }
    }
}

/// A timer of a `ManualClock`: disarmed when cancelled or dropped, as a loop's timer is (the clock keeps only its work).
final class ManualTimer: ClockTimer {
    /// The work, until it runs or the timer is disarmed.
    final class Work: Sendable {
        private let work: Mutex<(@Sendable () -> Void)?>

        init(_ work: @escaping @Sendable () -> Void) { self.work = Mutex(work) }

        var isCancelled: Bool { work.withLock { $0 == nil } }

        func cancel() { work.withLock { $0 = nil } }

        /// Runs the work once, unless cancelled.
        func fire() {
            let armed = work.withLock { work in
                defer { work = nil }
                return work
            }
            armed?()
        }
    }

    let work: Work

    init(_ work: @escaping @Sendable () -> Void) { self.work = Work(work) }

    func cancel() { work.cancel() }

    deinit { work.cancel() }
}
