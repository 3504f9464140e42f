import Foundation
import MITMCore
import Synchronization

/// The run's findings (fallbacks after refusals, pin-failure reports), readable from any thread. Fed from the
/// recorded events on the recording queue, never from the loops.
final class FindingsBook: Sendable {
    private let state: Mutex<RunFindings>

    init() {
        state = Mutex(RunFindings())
    }

    /// Takes a recorded event; returns the findings it reveals.
    func observe(_ event: ProxyEvent) -> [RunFinding] {
        state.withLock { $0.observe(event, at: Date()) }
    }

    /// A copy of the findings as of now.
    var findings: RunFindings { state.withLock { $0 } }
}
