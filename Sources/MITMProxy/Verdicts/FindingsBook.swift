import Foundation
import MITMCore
import Synchronization

/// The run's findings (fallbacks after refusals, pin-failure reports), readable from any thread. Fed from the
/// recorded events on the recording queue, never from the loops.
final class FindingsBook: Sendable {
    private let state: Mutex<RunFindings>
    private let clock: ProxyClock

    /// Findings dated by `clock`'s wall time.
    init(clock: ProxyClock) {
        state = Mutex(RunFindings())
        self.clock = clock
    }

    /// Takes a recorded event; returns the findings it reveals.
    func observe(_ event: ProxyEvent) -> [RunFinding] {
        state.withLock { $0.observe(event, at: clock.wallNow()) }
    }

    /// A copy of the findings as of now.
    var findings: RunFindings { state.withLock { $0 } }
}
