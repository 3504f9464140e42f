import Foundation
import MITMCore
import Synchronization

/// Every connection verdict of a proxy run, per connection and per host, readable from any thread,
/// with waiters for tests and a count of connections still undecided (to let verdicts settle).
final class VerdictBook: Sendable {
    private struct State {
        var connections: [Int: ConnectionVerdict] = [:]
        var order: [Int] = []
        var pending = 0
        var waiters: [UUID: (host: String, continuation: CheckedContinuation<HostVerdict?, Never>)] = [:]
    }

    private let state = Mutex(State())

    func connectionStarted() { state.withLock { $0.pending += 1 } }

    func connectionDecided() { state.withLock { $0.pending -= 1 } }

    /// Connections whose verdict is not decided yet.
    var pendingCount: Int { state.withLock { $0.pending } }

    func record(_ verdict: ConnectionVerdict) {
        let ready: [(CheckedContinuation<HostVerdict?, Never>, HostVerdict?)] = state.withLock { state in
            if state.connections[verdict.connectionID] == nil { state.order.append(verdict.connectionID) }
            state.connections[verdict.connectionID] = verdict
            let matching = state.waiters.filter { $0.value.host == verdict.host }
            guard !matching.isEmpty else { return [] }
            let aggregate = HostVerdict.aggregate(state.order.compactMap { state.connections[$0] }.filter { $0.host == verdict.host }).first
            for key in matching.keys { state.waiters.removeValue(forKey: key) }
            return matching.values.map { ($0.continuation, aggregate) }
        }
        for (continuation, aggregate) in ready { continuation.resume(returning: aggregate) }
    }

    /// All connection verdicts in the order they were first decided.
    var connections: [ConnectionVerdict] {
        state.withLock { state in state.order.compactMap { state.connections[$0] } }
    }

    /// Per-host aggregates.
    var hosts: [HostVerdict] { HostVerdict.aggregate(connections) }

    /// Waits until `host` has at least one decided connection, or `timeout` passes (nil then).
    func waitForVerdict(host: String, timeout: Duration) async -> HostVerdict? {
        let key = UUID()
        let wanted = host.lowercased()
        return await withCheckedContinuation { continuation in
            let existing: HostVerdict?? = state.withLock { state in
                let seen = state.order.compactMap { state.connections[$0] }.filter { $0.host == wanted }
                if !seen.isEmpty { return .some(HostVerdict.aggregate(seen).first) }
                state.waiters[key] = (wanted, continuation)
                return .none
            }
            if let existing {
                continuation.resume(returning: existing)
                return
            }
            Task {
                try? await Task.sleep(for: timeout)
                let expired = state.withLock { $0.waiters.removeValue(forKey: key) }
                expired?.continuation.resume(returning: nil)
            }
        }
    }

    /// Blocks until no connection is undecided or `timeout` seconds pass; returns whether all settled.
    func settle(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while pendingCount > 0 {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }
}
